import type { SavedReplyRepository } from "../../../domain/account/saved-replies.js";
import type { NoteRepository } from "../../../domain/conversation/repository.js";
import { searchDocText } from "../../../domain/conversation/search.js";
import { NOTE_COLUMNS, type NoteRow, noteValues, toNote } from "../../note-rows.js";
import { SAVED_REPLY_COLUMNS, type SavedReplyRow, savedReplyValues, toSavedReply } from "../../saved-reply-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Internal notes in SQLite; erasure and retention delete them with their conversation (repos/privacy.ts). */
export function sqliteNotes(db: Db): Sync<NoteRepository> {
  const add = db.prepare(`INSERT INTO conversation_notes (${NOTE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
  const index = db.prepare("INSERT INTO note_search (rowid, terms) VALUES (?, ?)");
  const list = db.prepare<[string, number], NoteRow>(
    `SELECT ${NOTE_COLUMNS} FROM conversation_notes WHERE conversation_id = ? ORDER BY created_at, note_id LIMIT ?`,
  );
  return {
    add: (n) => void index.run(add.run(...noteValues(n)).lastInsertRowid, searchDocText(n.content)),
    forConversation: (conversationId, limit) => list.all(conversationId, limit).map(toNote),
  };
}

/** Saved replies in SQLite; the shortcut is unique per owner (an index), so a taken one changes nothing. */
export function sqliteSavedReplies(db: Db): Sync<SavedReplyRepository> {
  const list = db.prepare<[string, string, number], SavedReplyRow>(
    `SELECT ${SAVED_REPLY_COLUMNS} FROM saved_replies WHERE account_id = ? AND owner_id IN ('', ?)
      ORDER BY shortcut, owner_id LIMIT ?`,
  );
  const get = db.prepare<[string, string], SavedReplyRow>(
    `SELECT ${SAVED_REPLY_COLUMNS} FROM saved_replies WHERE account_id = ? AND saved_reply_id = ?`,
  );
  const add = db.prepare(
    `INSERT INTO saved_replies (${SAVED_REPLY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const update = db.prepare(
    `UPDATE OR IGNORE saved_replies SET shortcut = ?, content = ?, updated_at = ?
      WHERE account_id = ? AND saved_reply_id = ?`,
  );
  const remove = db.prepare("DELETE FROM saved_replies WHERE account_id = ? AND saved_reply_id = ?");
  return {
    list: (accountId, ownerId, limit) => list.all(accountId, ownerId, limit).map(toSavedReply),
    get: (accountId, id) => {
      const r = get.get(accountId, id);
      return r && toSavedReply(r);
    },
    add: (r) => add.run(...savedReplyValues(r)).changes === 1,
    update: (r) => update.run(r.shortcut, r.content, r.updatedAt, r.accountId, r.savedReplyId).changes === 1,
    remove: (accountId, id) => remove.run(accountId, id).changes === 1,
  };
}
