import type { KnowledgeSnippet } from "../account/repository.js";

/** What the client's server tells about its customer; empty strings leave stored values as they are. */
export interface ContactProfile {
  contactName: string;
  email: string;
  phoneNumber: string;
}

/** Which contacts a list shows. */
export type ContactFilter = "all" | "unread" | "live";

/** One page request of the contact list. */
export interface ContactQuery {
  accountId: string;
  /** Already folded with foldForSearch; empty: no search. */
  search: string;
  filter: ContactFilter;
  limit: number;
  offset: number;
  /** Conversations with no message since this instant read as closed (idle). */
  liveSince: number;
}

/** A contact as listed. */
export interface ContactView {
  contactId: string;
  userId: string;
  contactName: string;
  phoneNumber: string;
  email: string;
  conversationStatus: "live" | "closed";
  assignedTo: string;
  unreadCount: number;
  latestMessageAt: number;
  channels: string[];
  /** The contact's latest conversation. */
  latestConversationId: string;
}

/** A conversation as stored. */
export interface ConversationRecord {
  conversationId: string;
  accountId: string;
  chatbotId: string;
  contactId: string;
  userId: string;
  channel: string;
  status: "live" | "closed";
  assignedTo: string;
  /** The display name of the operator in assignedTo; "" while the AI agent answers. */
  operatorName: string;
  createdAt: number;
  lastMessageAt: number | null;
  messageCount: number;
  /** User messages after the account's read marker. */
  unreadCount: number;
}

/** Who wrote a message. */
export type MessageRole = "user" | "assistant" | "operator";

/** A message as stored. */
export interface MessageRecord {
  messageId: string;
  conversationId: string;
  conversationCreatedAt: number;
  messageOrder: number;
  role: MessageRole;
  content: string;
  toolCalls: string;
  documents: KnowledgeSnippet[];
  createdAt: number;
}

/** A message to append; the repository assigns its order. */
export interface NewMessage {
  messageId: string;
  role: MessageRole;
  content: string;
  toolCalls: string;
  documents: KnowledgeSnippet[];
  createdAt: number;
}

/** A conversation to start together with its first message. */
export interface NewConversation {
  conversationId: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  channel: string;
}

/** The parts of a conversation its messages carry. */
export type ConversationRef = Pick<ConversationRecord, "conversationId" | "createdAt">;

/** Storage of contacts. */
export interface ContactRepository {
  /** Creates the contact of (account, user) or updates its profile; returns its contact_id. */
  upsert(accountId: string, userId: string, profile: ContactProfile | undefined, now: number): string;
  list(q: ContactQuery): { contacts: ContactView[]; hasMore: boolean };
  /** Whether the contact exists and belongs to the account. */
  belongsTo(accountId: string, contactId: string): boolean;
}

/** Storage of conversations and their messages; every write keeps the contact's aggregates in the same transaction. */
export interface ConversationRepository {
  byId(conversationId: string): ConversationRecord | undefined;
  /** Appends a message (starting the conversation when `start` is given) in one transaction; order is next in line. */
  append(conversationId: string, m: NewMessage, start?: NewConversation): MessageRecord;
  /** Messages with message_order in (offset, offset + limit], in order; the caller has the conversation already. */
  messages(conv: ConversationRef, limit: number, offset: number): { messages: MessageRecord[]; hasMore: boolean };
  /** The latest messages, oldest first, for the agent's context. */
  recent(conv: ConversationRef, count: number): MessageRecord[];
  /** The user's conversations with one chatbot, newest first. */
  forUser(accountId: string, chatbotId: string, userId: string, limit: number): ConversationRecord[];
  /** One page of a contact's conversations, newest first. */
  forContact(
    contactId: string,
    limit: number,
    offset: number,
  ): { conversations: ConversationRecord[]; hasMore: boolean };
  markRead(conversationId: string): void;
  assign(conversationId: string, assignee: string, operatorName: string): void;
  setStatus(conversationId: string, status: "live" | "closed", now: number): void;
}
