import type { ChatbotRepository } from "../../domain/account/repository.js";
import { CHATBOT_COLUMNS, chatbotSettings, chatbotValues, toChatbot } from "../account-rows.js";
import { pictureOf, pictureValues } from "../picture-rows.js";
import { bool } from "../row-values.js";
import type { PgDb } from "./db.js";
import { all, execute, first } from "./query.js";

/** Chatbots in PostgreSQL. */
export function pgChatbots(db: PgDb): ChatbotRepository {
  return {
    insert: (c) =>
      execute(
        db,
        "bot_insert",
        "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, " +
          "first_response_sla_minutes, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        chatbotValues(c, bool),
      ),
    byId: (id) =>
      first(db, "bot_by_id", `SELECT ${CHATBOT_COLUMNS} FROM chatbots WHERE chatbot_id = $1`, [id], toChatbot),
    listForAccount: (accountId) =>
      all(
        db,
        "bot_list",
        `SELECT ${CHATBOT_COLUMNS} FROM chatbots WHERE account_id = $1 ORDER BY created_at, chatbot_id`,
        [accountId],
        toChatbot,
      ),
    update: async (c) =>
      (await db.count(
        "bot_update",
        "UPDATE chatbots SET name = $1, allowed_origins = $2, knowledge = $3, agent = $4, appearance = $5, " +
          "active = $6, first_response_sla_minutes = $7 WHERE chatbot_id = $8 AND account_id = $9",
        [...chatbotSettings(c, bool), c.chatbotId, c.accountId],
      )) > 0,
    setPicture: async (accountId, chatbotId, p) =>
      (await db.count(
        "bot_picture_set",
        "UPDATE chatbots SET picture_id = $1, picture_type = $2, picture = $3 WHERE chatbot_id = $4 AND account_id = $5",
        [...pictureValues(p), chatbotId, accountId],
      )) > 0,
    picture: async (pictureId) => {
      const [r] = await db.rows(
        "bot_picture_get",
        // "<> ''" lets the lookup use the partial index of the chatbots that have a picture.
        "SELECT picture_id, picture_type, picture FROM chatbots WHERE picture_id = $1 AND picture_id <> '' AND active",
        [pictureId],
      );
      return r && pictureOf(r as Parameters<typeof pictureOf>[0]);
    },
  };
}
