import type { MessageRecord } from "./repository.js";

/** A conversation's state as shown to its readers (and pushed to its watchers). */
export interface ConversationSummary {
  conversationId: string;
  createdAt: number;
  status: "live" | "closed";
  assignedTo: string;
  /** The display name of the operator who holds it; "" while the AI agent answers. */
  operatorName: string;
  latestMessageAt: number | null;
  channel: string;
  unreadCount: number;
}

/** Something that happened to a conversation, published after it was committed. */
export type ConversationEvent =
  | { type: "message"; accountId: string; conversationId: string; message: MessageRecord }
  | { type: "conversation"; accountId: string; conversationId: string; conversation: ConversationSummary };

/** What a listener follows: one conversation, or every conversation of an account (an inbox). */
export type EventTopic = { conversationId: string } | { accountId: string };

/** Called with each event of its topic, in commit order; `closed` when the publisher shuts down. */
export interface EventListener {
  event(e: ConversationEvent): void;
  closed(): void;
}

/**
 * The live-update port: the domain publishes, watchers subscribe. An in-process implementation serves one
 * instance; one over a shared channel (PostgreSQL LISTEN/NOTIFY) can replace it when several instances run.
 */
export interface ConversationEvents {
  /** Delivers the event to its conversation's and its account's listeners; call only after the write committed. */
  publish(event: ConversationEvent): void;
  /** Starts delivering the topic's events to the listener; the returned function stops it. */
  subscribe(topic: EventTopic, listener: EventListener): () => void;
}
