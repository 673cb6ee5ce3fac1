import type { NoteRecord } from "../domain/conversation/repository.js";

/** A conversation_notes row as both back ends read it (PostgreSQL bigints as strings or numbers). */
export interface NoteRow {
  note_id: string;
  account_id: string;
  conversation_id: string;
  author_email: string;
  content: string;
  created_at: number | string;
}

export const toNote = (r: NoteRow): NoteRecord => ({
  noteId: r.note_id,
  accountId: r.account_id,
  conversationId: r.conversation_id,
  authorEmail: r.author_email,
  content: r.content,
  createdAt: Number(r.created_at),
});

/** A note's insert values, in the column order of NOTE_COLUMNS. */
export const noteValues = (n: NoteRecord) => [
  n.noteId,
  n.accountId,
  n.conversationId,
  n.authorEmail,
  n.content,
  n.createdAt,
];
export const NOTE_COLUMNS = "note_id, account_id, conversation_id, author_email, content, created_at";
