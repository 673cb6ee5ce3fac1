import type { ConversationPreview, ConversationRecord } from "../domain/conversation/repository.js";
import type { ContactRecord } from "../domain/privacy/repository.js";
import { type Big, numOrNull } from "./row-values.js";
import { TIMER_COLUMNS, type TimerRow, toTimerState } from "./timer-rows.js";

// The rows of the conversation tables that both back ends read alike (the conversions are in row-values.ts).

/** A row of `conversations` with its contact's user_id. */
export interface ConversationRow {
  conversation_id: string;
  account_id: string;
  chatbot_id: string;
  contact_id: string;
  user_id: string;
  channel: string;
  status: "live" | "closed";
  assigned_to: string;
  operator_name: string;
  created_at: Big;
  last_message_at: Big | null;
  message_count: Big;
  unread_count: Big;
}

export const toConversation = (r: ConversationRow): ConversationRecord => ({
  conversationId: r.conversation_id,
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  contactId: r.contact_id,
  userId: r.user_id,
  channel: r.channel,
  status: r.status,
  assignedTo: r.assigned_to,
  operatorName: r.operator_name,
  createdAt: Number(r.created_at),
  lastMessageAt: numOrNull(r.last_message_at),
  messageCount: Number(r.message_count),
  unreadCount: Number(r.unread_count),
});

/** A row of `contacts` as an export or an erasure reads it. */
export interface ContactRow {
  contact_id: string;
  account_id: string;
  user_id: string;
  contact_name: string;
  email: string;
  phone_number: string;
  created_at: Big;
}

export const toContact = (r: ContactRow): ContactRecord => ({
  contactId: r.contact_id,
  accountId: r.account_id,
  userId: r.user_id,
  contactName: r.contact_name,
  email: r.email,
  phoneNumber: r.phone_number,
  createdAt: Number(r.created_at),
});

/** A row of a page's conversation previews: its chatbot (and its name), last message (cut), timers and priority. */
export type PreviewRow = {
  chatbot_id: string;
  chatbot_name: string | null;
  role: string | null;
  content: string | null;
  priority: string;
} & TimerRow;

/**
 * The previews' columns of `conversations c` beside the last message `m` (its content cut by each back end) and
 * the conversation's chatbot `b` (PREVIEW_JOINS).
 */
export const PREVIEW_COLUMNS = `c.chatbot_id, b.name AS chatbot_name, m.role, c.priority, ${TIMER_COLUMNS.replace("conversation_id", "c.conversation_id")}`;

/** What the previews read beside `conversations c`: its last message `m` and its chatbot `b`. */
export const PREVIEW_JOINS = `LEFT JOIN messages m ON m.conversation_id = c.conversation_id AND m.message_order = c.message_count
      LEFT JOIN chatbots b ON b.chatbot_id = c.chatbot_id`;

export const toPreview = (r: PreviewRow): ConversationPreview => ({
  chatbotId: r.chatbot_id,
  chatbotName: r.chatbot_name ?? "",
  role: (r.role ?? "") as ConversationPreview["role"],
  content: r.content ?? "",
  timers: toTimerState(r),
  priority: r.priority as ConversationPreview["priority"],
});
