import type { ChatbotRecord, ChatbotRepository } from "../../../domain/account/repository.js";
import { CHATBOT_COLUMNS, type ChatbotRow, chatbotSettings, chatbotValues, toChatbot } from "../../account-rows.js";
import { pictureOf, pictureValues } from "../../picture-rows.js";
import { bit } from "../../row-values.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";
import { ShortMemo } from "./short-memo.js";

/** Chatbots in SQLite; looked up on every frame call, so parsed rows are kept briefly in memory. */
export function sqliteChatbots(db: Db): Sync<ChatbotRepository> {
  const insert = db.prepare(
    "INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, agent, appearance, active, " +
      "first_response_sla_minutes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const byId = db.prepare<[string], ChatbotRow>(`SELECT ${CHATBOT_COLUMNS} FROM chatbots WHERE chatbot_id = ?`);
  const list = db.prepare<[string], ChatbotRow>(
    `SELECT ${CHATBOT_COLUMNS} FROM chatbots WHERE account_id = ? ORDER BY created_at`,
  );
  const update = db.prepare(
    "UPDATE chatbots SET name = ?, allowed_origins = ?, knowledge = ?, agent = ?, appearance = ?, active = ?, " +
      "first_response_sla_minutes = ? " +
      "WHERE chatbot_id = ? AND account_id = ?",
  );
  const setPicture = db.prepare(
    "UPDATE chatbots SET picture_id = ?, picture_type = ?, picture = ? WHERE chatbot_id = ? AND account_id = ?",
  );
  // "<> ''" lets the lookup use the partial index of the chatbots that have a picture.
  const picture = db.prepare<[string], { picture_id: string; picture_type: string; picture: Buffer }>(
    "SELECT picture_id, picture_type, picture FROM chatbots WHERE picture_id = ? AND picture_id <> '' AND active = 1",
  );
  // A short cache: chatbot settings change rarely, and a stale entry lives at most a second.
  const cache = new ShortMemo<ChatbotRecord | undefined>(1000);
  return {
    insert: (c) => {
      insert.run(...chatbotValues(c, bit));
      cache.forget(c.chatbotId);
    },
    byId: (id) =>
      cache.get(id, () => {
        const r = byId.get(id);
        return r && toChatbot(r);
      }),
    listForAccount: (id) => list.all(id).map(toChatbot),
    update: (c) => {
      const changed = update.run(...chatbotSettings(c, bit), c.chatbotId, c.accountId).changes;
      cache.forget(c.chatbotId);
      return changed === 1;
    },
    setPicture: (accountId, chatbotId, p) => {
      const changed = setPicture.run(...pictureValues(p), chatbotId, accountId).changes;
      cache.forget(chatbotId);
      return changed === 1;
    },
    picture: (pictureId) => {
      const r = picture.get(pictureId);
      return r && pictureOf(r);
    },
  };
}
