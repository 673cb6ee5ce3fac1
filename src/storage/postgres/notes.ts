import type { SavedReplyRepository } from "../../domain/account/saved-replies.js";
import type { MentionAlertRepository, MentionRepository } from "../../domain/conversation/mentions.js";
import type { NoteRepository } from "../../domain/conversation/repository.js";
import { searchDocText } from "../../domain/conversation/search.js";
import { MENTION_COLUMNS, type MentionRow, mentionValues, toMention, toMentionView } from "../mention-rows.js";
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

/** Mentions in PostgreSQL: one row per (note, person); erasure and retention delete them with their conversation. */
export function pgMentions(db: PgDb): MentionRepository {
  return {
    add: async (ms) => {
      for (const m of ms)
        await db.count(
          "mention_add",
          `INSERT INTO note_mentions (${MENTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
          mentionValues(m),
        );
    },
    forNotes: async (noteIds) =>
      (
        await db.rows<MentionRow>(
          "mention_of_notes",
          `SELECT ${MENTION_COLUMNS} FROM note_mentions WHERE note_id = ANY($1) ORDER BY note_id, member_id`,
          [noteIds],
        )
      ).map(toMention),
    forMember: async (accountId, memberId, limit) =>
      (
        await db.rows<MentionRow>(
          "mention_of_member",
          `SELECT m.note_id, m.member_id, m.account_id, m.conversation_id, m.author_email, m.created_at, m.read_at,
                  n.content
             FROM note_mentions m JOIN conversation_notes n ON n.note_id = m.note_id
            WHERE m.account_id = $1 AND m.member_id = $2 ORDER BY m.created_at DESC, m.note_id DESC LIMIT $3`,
          [accountId, memberId, limit],
        )
      ).map(toMentionView),
    markRead: async (accountId, memberId, noteIds, at) =>
      noteIds === "all"
        ? db.count(
            "mention_read_all",
            "UPDATE note_mentions SET read_at = $1 WHERE account_id = $2 AND member_id = $3 AND read_at IS NULL",
            [at, accountId, memberId],
          )
        : db.count(
            "mention_read",
            `UPDATE note_mentions SET read_at = $1
              WHERE account_id = $2 AND member_id = $3 AND note_id = ANY($4) AND read_at IS NULL`,
            [at, accountId, memberId, noteIds],
          ),
  };
}

/** The mention e-mail preference in PostgreSQL: a column of the person's profile row (made when they have none). */
export function pgMentionAlerts(db: PgDb): MentionAlertRepository {
  return {
    emailAlerts: async (accountId, email) => {
      const [r] = await db.rows<{ mention_emails: boolean }>(
        "mention_alerts_get",
        "SELECT mention_emails FROM operator_profiles WHERE account_id = $1 AND email = $2",
        [accountId, email.toLowerCase()],
      );
      return r?.mention_emails ?? true;
    },
    setEmailAlerts: async (accountId, email, on, now) =>
      void (await db.count(
        "mention_alerts_set",
        `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, mention_emails)
         VALUES ($1, $2, '', '', $3, $4)
         ON CONFLICT (account_id, email) DO UPDATE SET mention_emails = excluded.mention_emails`,
        [accountId, email.toLowerCase(), now, on],
      )),
  };
}
