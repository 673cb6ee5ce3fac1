/** Synthetic data loaded straight into storage, for the benchmark (bench/seed/); not for production data. */

/** A contact with its aggregates already computed (what the message writes would have left). */
export interface BulkContact {
  contactId: string;
  userId: string;
  contactName: string;
  email: string;
  phoneNumber: string;
  createdAt: number;
  latestMessageAt: number;
  latestConversationId: string;
  /** The latest conversation's status, assignee and coalesce(last message, creation) instant, copied for the list. */
  latestStatus: "live" | "closed";
  latestAssignedTo: string;
  latestActivityAt: number;
  unreadCount: number;
  liveActivityAt: number | null;
  channels: string;
}

/** A conversation with its counters already computed. */
export interface BulkConversation {
  conversationId: string;
  chatbotId: string;
  contactId: string;
  channel: string;
  status: "live" | "closed";
  assignedTo: string;
  createdAt: number;
  lastMessageAt: number;
  messageCount: number;
  readOrder: number;
  unreadCount: number;
  /** The report's facts: the first customer and operator messages' instants, and the rating (stored with it). */
  firstCustomerAt: number | null;
  firstOperatorAt: number | null;
  ratingScore: number | null;
}

/** A message row. */
export interface BulkMessage {
  messageId: string;
  conversationId: string;
  /** The conversation's chatbot and start, copied on each message for the report. */
  chatbotId: string;
  conversationCreatedAt: number;
  messageOrder: number;
  role: string;
  content: string;
  createdAt: number;
  toolCalls?: string;
  documents?: string;
}

/** Loads rows whose aggregates the caller has computed; each account's rows land in one transaction. */
export interface BulkLoader {
  /** Runs fn, which adds one account's contacts, conversations and messages, as one transaction. */
  loadAccount(accountId: string, fn: () => void): void;
  addContact(accountId: string, c: BulkContact): void;
  addConversation(accountId: string, v: BulkConversation): void;
  addMessage(m: BulkMessage): void;
  /** Restores the back end's normal settings. */
  finish(): void;
}
