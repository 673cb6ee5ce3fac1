import type { SavedReplyRepository } from "../../../domain/account/saved-replies.js";
import type { MentionAlertRepository, MentionRepository } from "../../../domain/conversation/mentions.js";
import type { NoteRepository } from "../../../domain/conversation/repository.js";
import { searchDocText } from "../../../domain/conversation/search.js";
import { MENTION_COLUMNS, type MentionRow, mentionValues, toMention, toMentionView } from "../../mention-rows.js";
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

/** Mentions in SQLite: one row per (note, person); erasure and retention delete them with their conversation. */
export function sqliteMentions(db: Db): Sync<MentionRepository> {
  const add = db.prepare(
    `INSERT INTO note_mentions (${MENTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
  );
  const ofNote = db.prepare<[string], MentionRow>(
    `SELECT ${MENTION_COLUMNS} FROM note_mentions WHERE note_id = ? ORDER BY member_id`,
  );
  const ofMember = db.prepare<[string, string, number], MentionRow>(
    `SELECT m.note_id, m.member_id, m.account_id, m.conversation_id, m.author_email, m.created_at, m.read_at,
            n.content
       FROM note_mentions m JOIN conversation_notes n ON n.note_id = m.note_id
      WHERE m.account_id = ? AND m.member_id = ? ORDER BY m.created_at DESC, m.note_id DESC LIMIT ?`,
  );
  const readOne = db.prepare(
    "UPDATE note_mentions SET read_at = ? WHERE account_id = ? AND member_id = ? AND note_id = ? AND read_at IS NULL",
  );
  const readAll = db.prepare(
    "UPDATE note_mentions SET read_at = ? WHERE account_id = ? AND member_id = ? AND read_at IS NULL",
  );
  return {
    add: (ms) => {
      for (const m of ms) add.run(...mentionValues(m));
    },
    forNotes: (noteIds) => noteIds.flatMap((id) => ofNote.all(id).map(toMention)),
    forMember: (accountId, memberId, limit) => ofMember.all(accountId, memberId, limit).map(toMentionView),
    markRead: (accountId, memberId, noteIds, at) =>
      noteIds === "all"
        ? readAll.run(at, accountId, memberId).changes
        : noteIds.reduce((n, id) => n + readOne.run(at, accountId, memberId, id).changes, 0),
  };
}

/** The mention e-mail preference in SQLite: a column of the person's profile row (made when they have none). */
export function sqliteMentionAlerts(db: Db): Sync<MentionAlertRepository> {
  const get = db.prepare<[string, string], { mention_emails: number }>(
    "SELECT mention_emails FROM operator_profiles WHERE account_id = ? AND email = ?",
  );
  const set = db.prepare(
    `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, mention_emails)
     VALUES (?, ?, '', '', ?, ?)
     ON CONFLICT (account_id, email) DO UPDATE SET mention_emails = excluded.mention_emails`,
  );
  return {
    emailAlerts: (accountId, email) => (get.get(accountId, email.toLowerCase())?.mention_emails ?? 1) === 1,
    setEmailAlerts: (accountId, email, on, now) => void set.run(accountId, email.toLowerCase(), now, on ? 1 : 0),
  };
}
