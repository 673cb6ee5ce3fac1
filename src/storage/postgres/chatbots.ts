import type { ChatbotRecord, ChatbotRepository } from "../../domain/account/repository.js";
import { appearanceFromJson, appearanceToJson } from "../appearance-json.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;

const toChatbot = (r: Row): ChatbotRecord => ({
  chatbotId: r.chatbot_id as string,
  accountId: r.account_id as string,
  name: r.name as string,
  allowedOrigins: JSON.parse(r.allowed_origins as string) as string[],
  knowledge: JSON.parse(r.knowledge as string) as ChatbotRecord["knowledge"],
  agent: JSON.parse(r.agent as string) as ChatbotRecord["agent"],
  appearance: appearanceFromJson(r.appearance as string),
  active: r.active as boolean,
  createdAt: Number(r.created_at),
});

/** Chatbots in PostgreSQL. */
export function pgChatbots(db: PgDb): ChatbotRepository {
  return {
    insert: async (c) =>
      void (await db.count(
        "bot_insert",
        "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        [
          c.chatbotId,
          c.accountId,
          c.name,
          JSON.stringify(c.allowedOrigins),
          JSON.stringify(c.knowledge),
          JSON.stringify(c.agent),
          appearanceToJson(c.appearance),
          c.active,
          c.createdAt,
        ],
      )),
    byId: async (id) =>
      (await db.rows("bot_by_id", "SELECT * FROM chatbots WHERE chatbot_id = $1", [id])).map(toChatbot)[0],
    listForAccount: async (accountId) =>
      (
        await db.rows("bot_list", "SELECT * FROM chatbots WHERE account_id = $1 ORDER BY created_at, chatbot_id", [
          accountId,
        ])
      ).map(toChatbot),
    update: async (c) =>
      (await db.count(
        "bot_update",
        "UPDATE chatbots SET name = $1, allowed_origins = $2, knowledge = $3, agent = $4, appearance = $5, active = $6 WHERE chatbot_id = $7 AND account_id = $8",
        [
          c.name,
          JSON.stringify(c.allowedOrigins),
          JSON.stringify(c.knowledge),
          JSON.stringify(c.agent),
          appearanceToJson(c.appearance),
          c.active,
          c.chatbotId,
          c.accountId,
        ],
      )) > 0,
  };
}
