import type { ChatbotRecord, ChatbotRepository } from "../../../domain/account/repository.js";
import { appearanceFromJson, appearanceToJson } from "../../appearance-json.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  chatbot_id: string;
  account_id: string;
  name: string;
  allowed_origins: string;
  knowledge: string;
  agent: string;
  appearance: string;
  active: number;
  created_at: number;
}
const toRecord = (r: Row): ChatbotRecord => ({
  chatbotId: r.chatbot_id,
  accountId: r.account_id,
  name: r.name,
  allowedOrigins: JSON.parse(r.allowed_origins) as string[],
  knowledge: JSON.parse(r.knowledge) as ChatbotRecord["knowledge"],
  agent: JSON.parse(r.agent) as ChatbotRecord["agent"],
  appearance: appearanceFromJson(r.appearance),
  active: r.active === 1,
  createdAt: r.created_at,
});

/** Chatbots in SQLite; looked up on every frame call, so parsed rows are kept briefly in memory. */
export function sqliteChatbots(db: Db): Sync<ChatbotRepository> {
  const insert = db.prepare(
    "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const byId = db.prepare<[string], Row>("SELECT * FROM chatbots WHERE chatbot_id = ?");
  const list = db.prepare<[string], Row>("SELECT * FROM chatbots WHERE account_id = ? ORDER BY created_at");
  const update = db.prepare(
    "UPDATE chatbots SET name = ?, allowed_origins = ?, knowledge = ?, agent = ?, appearance = ?, active = ? WHERE chatbot_id = ? AND account_id = ?",
  );
  // A short cache: chatbot settings change rarely, and a stale entry lives at most a second.
  const cache = new Map<string, { at: number; rec: ChatbotRecord | undefined }>();
  return {
    insert: (c) => {
      insert.run(
        c.chatbotId,
        c.accountId,
        c.name,
        JSON.stringify(c.allowedOrigins),
        JSON.stringify(c.knowledge),
        JSON.stringify(c.agent),
        appearanceToJson(c.appearance),
        c.active ? 1 : 0,
        c.createdAt,
      );
      cache.delete(c.chatbotId);
    },
    byId: (id) => {
      const now = Date.now();
      const hit = cache.get(id);
      if (hit && now - hit.at < 1000) return hit.rec;
      const r = byId.get(id);
      const rec = r && toRecord(r);
      if (cache.size > 10_000) cache.clear();
      cache.set(id, { at: now, rec });
      return rec;
    },
    listForAccount: (id) => list.all(id).map(toRecord),
    update: (c) => {
      const changed = update.run(
        c.name,
        JSON.stringify(c.allowedOrigins),
        JSON.stringify(c.knowledge),
        JSON.stringify(c.agent),
        appearanceToJson(c.appearance),
        c.active ? 1 : 0,
        c.chatbotId,
        c.accountId,
      ).changes;
      cache.delete(c.chatbotId);
      return changed === 1;
    },
  };
}
