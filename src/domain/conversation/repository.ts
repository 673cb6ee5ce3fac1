import type { KnowledgeSnippet } from "../account/repository.js";
import type { MessageEffect } from "./rules.js";

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
  /** Only contacts whose latest conversation is held by this assignee (lower case; ai_agent: unassigned); null: any. */
  assignee: string | null;
  limit: number;
  offset: number;
  /** Conversations with no message since this instant read as closed (idle). */
  liveSince: number;
}

/** A contact as listed. */
export interface ContactView extends Omit<StoredContact, "latestStatus" | "latestActivityAt" | "liveActivityAt"> {
  /** The latest conversation's status as a reader sees it (idle conversations read closed). */
  conversationStatus: "live" | "closed";
}

/** A contact as stored, with its latest conversation's stored status and last activity. */
export interface StoredContact {
  contactId: string;
  userId: string;
  contactName: string;
  phoneNumber: string;
  email: string;
  latestStatus: "live" | "closed" | null;
  /** The latest conversation's last message (or creation) instant. */
  latestActivityAt: number | null;
  /** The last activity of the contact's live conversations (null: none is stored live); filter=live reads it. */
  liveActivityAt: number | null;
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
  status: "live" | "closed";
  assignedTo: string;
}

/** The parts of a conversation its messages carry. */
export type ConversationRef = Pick<ConversationRecord, "conversationId" | "createdAt">;

/** Storage of contacts. */
export interface ContactRepository {
  /** Creates the contact of (account, user) or updates its profile; returns its contact_id. */
  upsert(accountId: string, userId: string, profile: ContactProfile | undefined, now: number): Promise<string>;
  /**
   * `upsert` for a caller that needs no answer (a token issue): in a unit of work a back end may send it with the
   * unit's commit, in the same round trip (PostgreSQL does when no profile field is given: there is nothing to merge).
   */
  ensure(accountId: string, userId: string, profile: ContactProfile | undefined, now: number): Promise<void>;
  /** One page; `nextLiveActivityAt` is the live activity of the contact after it (undefined: there is none). */
  list(
    q: ContactQuery,
  ): Promise<{ contacts: StoredContact[]; hasMore: boolean; nextLiveActivityAt?: number | null | undefined }>;
  /** Whether the contact exists and belongs to the account. */
  belongsTo(accountId: string, contactId: string): Promise<boolean>;
  /**
   * What the account's contact lists are made of, as one value that changes with every committed change of them:
   * its event counter (every message, status, assignment and read marker records an event) and the count of
   * the changes that record none (profiles, retention). Two equal values mean no such change committed between.
   */
  listVersion(accountId: string): Promise<string>;
}

/** Storage of conversations and their messages; every write keeps the contact's aggregates in the same transaction. */
export interface ConversationRepository {
  byId(conversationId: string): Promise<ConversationRecord | undefined>;
  /**
   * Appends a message (starting the conversation when `start` is given) in one transaction; order is next in line.
   * `effect` says what it does to the conversation's unread count and status (the domain's rules decide).
   */
  append(conversationId: string, m: NewMessage, effect: MessageEffect, start?: NewConversation): Promise<MessageRecord>;
  /** Messages with message_order in (offset, offset + limit], in order; the caller has the conversation already. */
  messages(
    conv: ConversationRef,
    limit: number,
    offset: number,
  ): Promise<{ messages: MessageRecord[]; hasMore: boolean }>;
  /** How many messages the conversation has (its latest message_order), or undefined when it does not exist. */
  messageCount(conversationId: string): Promise<number | undefined>;
  /** The latest messages, oldest first, for the agent's context. */
  recent(conv: ConversationRef, count: number): Promise<MessageRecord[]>;
  /** The user's conversations with one chatbot, newest first. */
  forUser(accountId: string, chatbotId: string, userId: string, limit: number): Promise<ConversationRecord[]>;
  /** One page of a contact's conversations, newest first. */
  forContact(
    contactId: string,
    limit: number,
    offset: number,
  ): Promise<{ conversations: ConversationRecord[]; hasMore: boolean }>;
  markRead(conversationId: string): Promise<void>;
  /**
   * Moves the read marker back to just before the latest customer message (that one counts as unread again);
   * a conversation with no customer message is left as it is.
   */
  markUnread(conversationId: string): Promise<void>;
  assign(conversationId: string, assignee: string, operatorName: string): Promise<void>;
  setStatus(conversationId: string, status: "live" | "closed", now: number): Promise<void>;
}
