import type { MentionRecord, MentionView } from "../domain/conversation/mentions.js";

/** A note_mentions row as both back ends read it (PostgreSQL bigints as strings or numbers). */
export interface MentionRow {
  note_id: string;
  member_id: string;
  account_id: string;
  conversation_id: string;
  author_email: string;
  created_at: number | string;
  read_at: number | string | null;
  content?: string;
}

export const toMention = (r: MentionRow): MentionRecord => ({
  noteId: r.note_id,
  memberId: r.member_id,
  accountId: r.account_id,
  conversationId: r.conversation_id,
  authorEmail: r.author_email,
  createdAt: Number(r.created_at),
  readAt: r.read_at === null ? null : Number(r.read_at),
});

export const toMentionView = (r: MentionRow): MentionView => ({ ...toMention(r), content: r.content ?? "" });

/** A mention's insert values, in the column order of MENTION_COLUMNS. */
export const mentionValues = (m: MentionRecord) => [
  m.noteId,
  m.memberId,
  m.accountId,
  m.conversationId,
  m.authorEmail,
  m.createdAt,
  m.readAt,
];
export const MENTION_COLUMNS = "note_id, member_id, account_id, conversation_id, author_email, created_at, read_at";
