import type { SavedReplyRepository } from "../../domain/account/saved-replies.js";
import type { NoteRepository } from "../../domain/conversation/repository.js";
import { searchDocText } from "../../domain/conversation/search.js";
import { NOTE_COLUMNS, type NoteRow, noteValues, toNote } from "../note-rows.js";
import { SAVED_REPLY_COLUMNS, type SavedReplyRow, savedReplyValues, toSavedReply } from "../saved-reply-rows.js";
import type { PgDb } from "./db.js";

/** Internal notes in PostgreSQL; erasure and retention delete them with their conversation (privacy.ts). */
export function pgNotes(db: PgDb): NoteRepository {
  return {
    add: async (n) =>
      void (await db.count(
        "note_add",
        `INSERT INTO conversation_notes (${NOTE_COLUMNS}, search_words)
          VALUES ($1, $2, $3, $4, $5, $6, to_tsvector('simple', $7))`,
        [...noteValues(n), searchDocText(n.content)],
      )),
    forConversation: async (conversationId, limit) =>
      (
        await db.rows<NoteRow>(
          "note_list",
          `SELECT ${NOTE_COLUMNS} FROM conversation_notes WHERE conversation_id = $1
            ORDER BY created_at, note_id LIMIT $2`,
          [conversationId, limit],
        )
      ).map(toNote),
  };
}

/** Saved replies in PostgreSQL; the shortcut is unique per owner (an index), so a taken one changes nothing. */
export function pgSavedReplies(db: PgDb): SavedReplyRepository {
  return {
    list: async (accountId, ownerId, limit) =>
      (
        await db.rows<SavedReplyRow>(
          "saved_reply_list",
          `SELECT ${SAVED_REPLY_COLUMNS} FROM saved_replies WHERE account_id = $1 AND owner_id IN ('', $2)
            ORDER BY shortcut, owner_id LIMIT $3`,
          [accountId, ownerId, limit],
        )
      ).map(toSavedReply),
    get: async (accountId, id) => {
      const [r] = await db.rows<SavedReplyRow>(
        "saved_reply_get",
        `SELECT ${SAVED_REPLY_COLUMNS} FROM saved_replies WHERE account_id = $1 AND saved_reply_id = $2`,
        [accountId, id],
      );
      return r && toSavedReply(r);
    },
    add: async (r) =>
      (await db.count(
        "saved_reply_add",
        `INSERT INTO saved_replies (${SAVED_REPLY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        savedReplyValues(r),
      )) === 1,
    // A shortcut another reply holds: the update is skipped (no unique violation to abort a unit of work).
    update: async (r) =>
      (await db.count(
        "saved_reply_update",
        `UPDATE saved_replies SET shortcut = $1, content = $2, updated_at = $3
          WHERE account_id = $4 AND saved_reply_id = $5
            AND NOT EXISTS (SELECT 1 FROM saved_replies o
                             WHERE o.account_id = $4 AND o.owner_id = saved_replies.owner_id
                               AND o.shortcut = $1 AND o.saved_reply_id <> $5)`,
        [r.shortcut, r.content, r.updatedAt, r.accountId, r.savedReplyId],
      )) === 1,
    remove: async (accountId, id) =>
      (await db.count("saved_reply_remove", "DELETE FROM saved_replies WHERE account_id = $1 AND saved_reply_id = $2", [
        accountId,
        id,
      ])) === 1,
  };
}
