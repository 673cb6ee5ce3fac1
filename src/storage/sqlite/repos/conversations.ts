import type { KnowledgeSnippet } from "../../../domain/account/repository.js";
import {
  type ConversationPreview,
  type ConversationRecord,
  type ConversationRepository,
  type MessageAttachment,
  type MessageRecord,
  type MessageRole,
  type NewConversation,
  type NewMessage,
  PREVIEW_LENGTH,
} from "../../../domain/conversation/repository.js";
import type { MessageEffect } from "../../../domain/conversation/rules.js";
import { searchDocText } from "../../../domain/conversation/search.js";
import { contactSearchText } from "../../../domain/conversation/search-fold.js";
import { newId } from "../../../domain/ids.js";
import {
  type ConversationRow,
  PREVIEW_COLUMNS,
  PREVIEW_JOINS,
  type PreviewRow,
  toConversation,
  toPreview,
} from "../../conversation-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";
import { nextContactRowid } from "./contact-rowid.js";

// A message row as an array (better-sqlite3's raw mode: no object per row). Empty tool_calls and documents come
// back as NULL, which costs no string.
type MsgRow = [
  messageId: string,
  messageOrder: number,
  role: string,
  content: string,
  toolCalls: string | null,
  documents: string | null,
  createdAt: number,
  attachments: string | null,
  authorName: string | null,
];
const MSG_COLUMNS =
  "message_id, message_order, role, content, nullif(tool_calls, '') AS tool_calls, nullif(documents, '[]') AS " +
  "documents, created_at, nullif(attachments, '[]') AS attachments, nullif(author_name, '') AS author_name";

const toMsg = (r: MsgRow, conversationId: string, conversationCreatedAt: number): MessageRecord => ({
  messageId: r[0],
  conversationId,
  conversationCreatedAt,
  messageOrder: r[1],
  role: r[2] as MessageRole,
  content: r[3],
  toolCalls: r[4] ?? "",
  documents: r[5] === null ? [] : (JSON.parse(r[5]) as KnowledgeSnippet[]),
  createdAt: r[6],
  ...(r[7] === null ? {} : { attachments: JSON.parse(r[7]) as MessageAttachment[] }),
  ...(r[8] === null ? {} : { authorName: r[8] }),
});

/** Conversations and messages in SQLite; each write is one transaction that also keeps the contact's aggregates. */
export function sqliteConversations(db: Db): Sync<ConversationRepository> {
  const CONV = "SELECT v.*, c.user_id FROM conversations v JOIN contacts c ON c.contact_id = v.contact_id";
  const byId = db.prepare<[string], ConversationRow>(`${CONV} WHERE v.conversation_id = ?`);
  const forUser = db.prepare<[string, string, string, number], ConversationRow>(
    `${CONV} WHERE c.account_id = ? AND c.user_id = ? AND v.chatbot_id = ? ORDER BY v.created_at DESC LIMIT ?`,
  );
  // Newest first on the conversations_contact index; conversation_id breaks ties of the same millisecond.
  const forContact = db.prepare<[string, number, number], ConversationRow>(
    `${CONV} WHERE v.contact_id = ? ORDER BY v.created_at DESC, v.conversation_id DESC LIMIT ? OFFSET ?`,
  );
  const ensureContact = db.prepare<
    [{ accountId: string; contactId: string; userId: string; now: number; searchText: string }],
    { contact_id: string }
  >(
    `INSERT INTO contacts (rowid, contact_id, account_id, user_id, created_at, search_text) VALUES (${nextContactRowid("@accountId")}, @contactId, @accountId, @userId, @now, @searchText)
     ON CONFLICT (account_id, user_id) DO UPDATE SET user_id = user_id RETURNING contact_id`,
  );
  const insertConv = db.prepare(
    "INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, " +
      "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  // The order comes from the conversation's own counter, bumped inside the same transaction: gap-free under any
  // concurrency.
  // The report's facts ride along: the earliest customer and operator message (min, not the first written: two
  // sends may commit in the other order than their instants) and the latest activity.
  // Every column of the row as the bump left it: with the contact's user_id (touchContact's), the conversation as a
  // read would answer it, so the unit of work needs no read of it after the append (appendAndRead).
  const bump = db.prepare<
    [{ now: number; unread: number; reopens: number; id: string; role: string }],
    Omit<ConversationRow, "user_id"> & { created_at: number; last_message_at: number; message_count: number }
  >(`
    UPDATE conversations SET message_count = message_count + 1, last_message_at = max(coalesce(last_message_at, @now), @now),
      unread_count = unread_count + @unread, status = CASE WHEN @reopens THEN 'live' ELSE status END,
      first_customer_at = CASE WHEN @role = 'user' THEN min(coalesce(first_customer_at, @now), @now) ELSE first_customer_at END,
      first_operator_at = CASE WHEN @role = 'operator' THEN min(coalesce(first_operator_at, @now), @now) ELSE first_operator_at END
    WHERE conversation_id = @id RETURNING *`);
  const insertMsg = db.prepare(
    "INSERT INTO messages (message_id, conversation_id, message_order, role, content, tool_calls, documents, " +
      "created_at, chatbot_id, conversation_created_at, attachments, author_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const indexMsg = db.prepare("INSERT INTO message_search (rowid, terms) VALUES (?, ?)");
  // The conversation written to becomes the latest; its state as this write left it (its last activity) is
  // copied for the list, which then needs no join.
  const touchContact = db
    .prepare(`
    UPDATE contacts SET
      latest_message_at = max(coalesce(latest_message_at, 0), @now),
      latest_conversation_id = @conversationId,
      latest_status = @status,
      latest_assigned_to = @assignedTo,
      latest_activity_at = @activity,
      unread_count = unread_count + @unread,
      live_activity_at = CASE WHEN @live THEN max(coalesce(live_activity_at, 0), @now) ELSE live_activity_at END,
      channels = CASE WHEN instr(',' || channels || ',', ',' || @channel || ',') > 0 THEN channels
                      WHEN channels = '' THEN @channel ELSE channels || ',' || @channel END
    WHERE contact_id = @contactId RETURNING user_id`)
    .pluck();
  // After a status change: the live activity over all the contact's conversations, and the copy of the latest
  // conversation's state only when the changed one is the latest (an older one's change must not show).
  const statusContact = db.prepare(`
    UPDATE contacts SET
      live_activity_at = (SELECT max(coalesce(last_message_at, created_at)) FROM conversations WHERE contact_id = @id
        AND status = 'live'),
      latest_status = CASE WHEN latest_conversation_id = @conversationId THEN @status ELSE latest_status END,
      latest_activity_at = CASE WHEN latest_conversation_id = @conversationId THEN @activity ELSE latest_activity_at END
    WHERE contact_id = @id`);
  const page = db
    .prepare<[string, number, number], MsgRow>(
      `SELECT ${MSG_COLUMNS} FROM messages WHERE conversation_id = ? AND message_order > ? ORDER BY message_order LIMIT ?`,
    )
    .raw();
  const recent = db
    .prepare<[string, number], MsgRow>(
      `SELECT ${MSG_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY message_order DESC LIMIT ?`,
    )
    .raw();
  const messageCount = db
    .prepare<[string], number>("SELECT message_count FROM conversations WHERE conversation_id = ?")
    .pluck();
  const unreadOff = db.prepare(
    "UPDATE contacts SET unread_count = unread_count - (SELECT unread_count FROM conversations WHERE conversation_id " +
      "= @id) WHERE contact_id = (SELECT contact_id FROM conversations WHERE conversation_id = @id)",
  );
  const readAll = db.prepare(
    "UPDATE conversations SET unread_count = 0, read_order = message_count WHERE conversation_id = ?",
  );
  const markRead = db.transaction((conversationId: string) => {
    unreadOff.run({ id: conversationId });
    readAll.run(conversationId);
  });
  const lastUser = db.prepare<[string], { last: number | null; read_order: number }>(
    "SELECT (SELECT max(message_order) FROM messages WHERE conversation_id = v.conversation_id AND role = 'user') " +
      "AS last, read_order FROM conversations v WHERE conversation_id = ?",
  );
  const unreadOne = db.prepare<[number, string], { contact_id: string }>(
    "UPDATE conversations SET unread_count = 1, read_order = ? WHERE conversation_id = ? RETURNING contact_id",
  );
  const unreadContact = db.prepare<[string]>(
    "UPDATE contacts SET unread_count = unread_count + 1 WHERE contact_id = ?",
  );
  const markUnread = db.transaction((conversationId: string) => {
    const c = lastUser.get(conversationId);
    // No customer message, or the latest is unread already: nothing changes.
    if (!c || c.last === null || c.read_order < c.last) return;
    const r = unreadOne.get(c.last - 1, conversationId);
    if (r) unreadContact.run(r.contact_id);
  });
  const statusOf = db.prepare<[string, number, string], { contact_id: string; status: string; activity: number }>(
    "UPDATE conversations SET status = ?, last_message_at = coalesce(last_message_at, ?) WHERE conversation_id = ? " +
      "RETURNING contact_id, status, coalesce(last_message_at, created_at) AS activity",
  );
  const setStatus = db.transaction((conversationId: string, status: string, now: number) => {
    const r = statusOf.get(status, now, conversationId);
    if (r) statusContact.run({ id: r.contact_id, conversationId, status: r.status, activity: r.activity });
  });
  const assignOf = db.prepare<[string, string, string], { contact_id: string }>(
    "UPDATE conversations SET assigned_to = ?, operator_name = ? WHERE conversation_id = ? RETURNING contact_id",
  );
  // Only when the conversation is the contact's latest: the list shows the latest one's assignee.
  const assignContact = db.prepare<[string, string, string]>(
    "UPDATE contacts SET latest_assigned_to = ? WHERE contact_id = ? AND latest_conversation_id = ?",
  );
  const assign = db.transaction((conversationId: string, assignee: string, operatorName: string) => {
    const r = assignOf.get(assignee, operatorName, conversationId);
    if (r) assignContact.run(assignee, r.contact_id, conversationId);
  });
  const append = db.transaction(
    (
      conversationId: string,
      m: NewMessage,
      effect: MessageEffect,
      start: NewConversation | undefined,
    ): { message: MessageRecord; conversation: ConversationRecord } => {
      if (start) {
        const contactId = ensureContact.get({
          accountId: start.accountId,
          contactId: newId(),
          userId: start.userId,
          now: m.createdAt,
          searchText: contactSearchText({ userId: start.userId, contactName: "", email: "", phoneNumber: "" }),
        })!.contact_id;
        insertConv.run(
          start.conversationId,
          start.accountId,
          start.chatbotId,
          contactId,
          start.channel,
          start.status,
          start.assignedTo,
          m.createdAt,
        );
      }
      const unread = effect.unread ? 1 : 0;
      const conv = bump.get({
        now: m.createdAt,
        unread,
        reopens: effect.reopens ? 1 : 0,
        id: conversationId,
        role: m.role,
      });
      if (!conv) throw new Error(`conversation ${conversationId} vanished`);
      const { lastInsertRowid } = insertMsg.run(
        m.messageId,
        conversationId,
        conv.message_count,
        m.role,
        m.content,
        m.toolCalls,
        JSON.stringify(m.documents),
        m.createdAt,
        conv.chatbot_id,
        conv.created_at,
        JSON.stringify(m.attachments ?? []),
        m.authorName ?? "",
      );
      indexMsg.run(lastInsertRowid, searchDocText(m.content));
      const userId = touchContact.get({
        now: m.createdAt,
        activity: conv.last_message_at,
        conversationId,
        unread,
        live: conv.status === "live" ? 1 : 0,
        status: conv.status,
        assignedTo: conv.assigned_to,
        channel: conv.channel,
        contactId: conv.contact_id,
      }) as string;
      return {
        message: { ...m, conversationId, conversationCreatedAt: conv.created_at, messageOrder: conv.message_count },
        conversation: toConversation({ ...conv, user_id: userId }),
      };
    },
  );

  // One statement for a page's conversations: each by its key, its last message by (conversation, order).
  const previews = db.prepare<[string], PreviewRow>(
    `SELECT ${PREVIEW_COLUMNS}, substr(m.content, 1, ${PREVIEW_LENGTH}) AS content
      FROM json_each(?) j JOIN conversations c ON c.conversation_id = j.value
      ${PREVIEW_JOINS}`,
  );
  return {
    byId: (id) => {
      const r = byId.get(id);
      return r && toConversation(r);
    },
    previews: (ids) => {
      const out = new Map<string, ConversationPreview>();
      if (ids.length === 0) return out;
      for (const r of previews.all(JSON.stringify(ids))) out.set(r.conversation_id, toPreview(r));
      return out;
    },
    // IMMEDIATE takes the write lock first, so writers in other processes queue instead of failing mid-transaction.
    append: (id, m, effect, start) => append.immediate(id, m, effect, start).message,
    appendAndRead: (id, m, effect, start) => append.immediate(id, m, effect, start),
    // The caller has just read the conversation, so its creation time comes along instead of being read again.
    messages: (conv, limit, offset) => {
      // message_order is gap-free from 1, so "skip offset" is a range, not an OFFSET scan.
      const rows = page.all(conv.conversationId, offset, limit + 1);
      const messages: MessageRecord[] = [];
      for (let i = 0; i < rows.length && i < limit; i++)
        messages.push(toMsg(rows[i]!, conv.conversationId, conv.createdAt));
      return { messages, hasMore: rows.length > limit };
    },
    messageCount: (id) => messageCount.get(id),
    recent: (conv, count) =>
      recent
        .all(conv.conversationId, count)
        .reverse()
        .map((r) => toMsg(r, conv.conversationId, conv.createdAt)),
    forUser: (accountId, chatbotId, userId, limit) =>
      forUser.all(accountId, userId, chatbotId, limit).map(toConversation),
    markRead: (id) => markRead.immediate(id),
    markUnread: (id) => markUnread.immediate(id),
    forContact: (contactId, limit, offset) => {
      const rows = forContact.all(contactId, limit + 1, offset);
      return { conversations: rows.slice(0, limit).map(toConversation), hasMore: rows.length > limit };
    },
    assign: (id, assignee, operatorName) => assign.immediate(id, assignee, operatorName),
    setStatus: (id, status, now) => setStatus.immediate(id, status, now),
  };
}
