import type { ChatbotRecord, ChatbotRepository } from "../../../domain/account/repository.js";
import { type ChatbotRow, chatbotSettings, chatbotValues, toChatbot } from "../../account-rows.js";
import { bit } from "../../row-values.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Chatbots in SQLite; looked up on every frame call, so parsed rows are kept briefly in memory. */
export function sqliteChatbots(db: Db): Sync<ChatbotRepository> {
  const insert = db.prepare(
    "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, " +
      "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const byId = db.prepare<[string], ChatbotRow>("SELECT * FROM chatbots WHERE chatbot_id = ?");
  const list = db.prepare<[string], ChatbotRow>("SELECT * FROM chatbots WHERE account_id = ? ORDER BY created_at");
  const update = db.prepare(
    "UPDATE chatbots SET name = ?, allowed_origins = ?, knowledge = ?, agent = ?, appearance = ?, active = ? " +
      "WHERE chatbot_id = ? AND account_id = ?",
  );
  // A short cache: chatbot settings change rarely, and a stale entry lives at most a second.
  const cache = new Map<string, { at: number; rec: ChatbotRecord | undefined }>();
  return {
    insert: (c) => {
      insert.run(...chatbotValues(c, bit));
      cache.delete(c.chatbotId);
    },
    byId: (id) => {
      const now = Date.now();
      const hit = cache.get(id);
      if (hit && now - hit.at < 1000) return hit.rec;
      const r = byId.get(id);
      const rec = r && toChatbot(r);
      if (cache.size > 10_000) cache.clear();
      cache.set(id, { at: now, rec });
      return rec;
    },
    listForAccount: (id) => list.all(id).map(toChatbot),
    update: (c) => {
      const changed = update.run(...chatbotSettings(c, bit), c.chatbotId, c.accountId).changes;
      cache.delete(c.chatbotId);
      return changed === 1;
    },
  };
}
