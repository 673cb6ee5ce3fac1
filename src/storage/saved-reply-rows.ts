import type { SavedReplyRecord } from "../domain/account/saved-replies.js";

/** A saved_replies row as both back ends read it. */
export interface SavedReplyRow {
  saved_reply_id: string;
  account_id: string;
  owner_id: string;
  shortcut: string;
  content: string;
  created_at: number | string;
  updated_at: number | string;
}

export const toSavedReply = (r: SavedReplyRow): SavedReplyRecord => ({
  savedReplyId: r.saved_reply_id,
  accountId: r.account_id,
  ownerId: r.owner_id,
  shortcut: r.shortcut,
  content: r.content,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** A saved reply's insert values, in the column order of SAVED_REPLY_COLUMNS. */
export const savedReplyValues = (r: SavedReplyRecord) => [
  r.savedReplyId,
  r.accountId,
  r.shortcut,
  r.content,
  r.createdAt,
  r.updatedAt,
  r.ownerId,
];
export const SAVED_REPLY_COLUMNS = "saved_reply_id, account_id, shortcut, content, created_at, updated_at, owner_id";
