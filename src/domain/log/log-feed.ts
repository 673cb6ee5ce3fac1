import type { ConversationEvent, ConversationEvents, EventListener, EventTopic, PlacedEntries } from "./events.js";
import { TopicListeners } from "./topics.js";

/**
 * Who hears, on this instance, that an account's event log advanced: watchers (of a conversation, of an account)
 * and the webhook dispatcher. The store tells it, after each commit that appended events here or on another
 * instance (Store.onLogAdvanced): the append is the only announcement there is, so what a watcher reads and what a
 * webhook receiver gets come from one record. Hints wait for nothing: every answer and streamed item waits for the
 * disk where it leaves the process (protocol/durable.ts), as every webhook does (the dispatcher).
 */
export class LogFeed implements ConversationEvents {
  private readonly topics = new TopicListeners<EventListener>();
  private readonly anyChange = new Set<() => void>();
  private readonly accounts = new Set<(changes: readonly ConversationEvent[] | undefined) => void>();
  private isClosed = false;

  /**
   * The store's announcement: these logs advanced (undefined: anything may have, announcements were lost);
   * `deliveries` false when the appends recorded no webhook delivery (the dispatcher then has nothing new to claim);
   * `placed`, what this process's placing put in the log (its account's readers may hand it on without a read).
   */
  advanced(changes: readonly ConversationEvent[] | undefined, deliveries = true, placed?: PlacedEntries): void {
    if (this.isClosed) return;
    if (deliveries) for (const l of [...this.anyChange]) l();
    for (const l of [...this.accounts]) l(changes);
    if (changes === undefined) {
      for (const l of this.topics.all()) l.changed();
      return;
    }
    for (const c of changes) for (const l of this.topics.of(c.accountId, c.conversationId)) l.changed(placed);
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    if (this.isClosed) {
      queueMicrotask(() => listener.closed());
      return () => undefined;
    }
    return this.topics.add(topic, listener);
  }

  /**
   * Calls `l` on every announcement that may have recorded webhook deliveries, whatever it names (the dispatcher:
   * they may be due). An append that recorded none wakes no dispatcher: it added nothing to claim.
   */
  onAdvanced(l: () => void): () => void {
    this.anyChange.add(l);
    return () => this.anyChange.delete(l);
  }

  /** Calls `l` on every announcement with the logs it names (undefined: any may have advanced). */
  onAccounts(l: (changes: readonly ConversationEvent[] | undefined) => void): () => void {
    this.accounts.add(l);
    return () => this.accounts.delete(l);
  }

  /** Ends every subscription (at shutdown): watchers end their streams, clients resume elsewhere or later. */
  close(): void {
    this.isClosed = true;
    const all = this.topics.all();
    this.topics.clear();
    this.anyChange.clear();
    this.accounts.clear();
    for (const l of all) l.closed();
  }

  /** How many watchers are subscribed. */
  get listeners(): number {
    return this.topics.all().length;
  }
}
