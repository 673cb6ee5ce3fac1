/**
 * A hint that an account's event log advanced, for one of its conversations ("" for the account's own events). It
 * carries no content: a watcher reads the log from its own position, so a hint that arrives late, twice, out of
 * order or not at all cannot make it skip or repeat anything.
 */
export interface ConversationEvent {
  accountId: string;
  conversationId: string;
}

/** What a listener follows: one conversation, or every conversation of an account (an inbox). */
export type EventTopic = { conversationId: string } | { accountId: string };

/** Told when its topic may have changed; `closed` when the publisher shuts down. */
export interface EventListener {
  /** Something of the topic changed, or may have (the channel reconnected and hints may have been lost). */
  changed(): void;
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
