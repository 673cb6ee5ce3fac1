import type { EventRecord } from "./repository.js";

/**
 * A hint that an account's event log advanced, for one of its conversations ("" for the account's own events). It
 * carries no content: a watcher reads the log from its own position, so a hint that arrives late, twice, out of
 * order or not at all cannot make it skip or repeat anything.
 */
export interface ConversationEvent {
  accountId: string;
  conversationId: string;
}

/**
 * The entries one placing of this process put in an account's log, when the back end has them at hand (PostgreSQL's
 * placing answers them): places `firstSeq` to `lastSeq`, dense. A reader whose place is just before them hands them
 * on without reading the log back; any other reads it, as after any hint.
 */
export interface PlacedEntries {
  accountId: string;
  firstSeq: number;
  lastSeq: number;
  /** The entries in place order (made on the first call). */
  entries(): readonly EventRecord[];
}

/** What a listener follows: one conversation, or every conversation of an account (an inbox). */
export type EventTopic = { conversationId: string } | { accountId: string };

/** Told when its topic may have changed; `closed` when the publisher shuts down. */
export interface EventListener {
  /**
   * Something of the topic changed, or may have (the channel reconnected and hints may have been lost); with
   * `placed`, what this process's placing put in the account's log.
   */
  changed(placed?: PlacedEntries): void;
  closed(): void;
}

/**
 * Where watchers subscribe. Hints follow from the event log alone: the store announces every append after its
 * commit (on PostgreSQL, to every instance), and nothing else publishes them (log-feed.ts).
 */
export interface ConversationEvents {
  /** Starts telling the listener of its topic's changes; the returned function stops it. */
  subscribe(topic: EventTopic, listener: EventListener): () => void;
}
