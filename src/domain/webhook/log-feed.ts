import type { ConversationEvent, ConversationEvents, EventListener, EventTopic } from "../conversation/events.js";

/**
 * Who hears, on this instance, that an account's event log advanced: watchers (of a conversation, of an account)
 * and the webhook dispatcher. The store tells it, after each commit that appended events here or on another
 * instance (Store.onLogAdvanced): the append is the only announcement there is, so what a watcher reads and what a
 * webhook receiver gets come from one record. Hints wait for nothing: every answer and streamed item waits for the
 * disk where it leaves the process (protocol/durable.ts), as every webhook does (the dispatcher).
 */
export class LogFeed implements ConversationEvents {
  private readonly byConversation = new Map<string, Set<EventListener>>();
  private readonly byAccount = new Map<string, Set<EventListener>>();
  private readonly anyChange = new Set<() => void>();
  private isClosed = false;

  /** The store's announcement: these logs advanced (undefined: anything may have, announcements were lost). */
  advanced(changes: readonly ConversationEvent[] | undefined): void {
    if (this.isClosed) return;
    for (const l of [...this.anyChange]) l();
    if (changes === undefined) {
      for (const set of [...this.byConversation.values(), ...this.byAccount.values()]) for (const l of set) l.changed();
      return;
    }
    for (const c of changes)
      for (const set of [this.byConversation.get(c.conversationId), this.byAccount.get(c.accountId)])
        if (set) for (const l of [...set]) l.changed();
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    if (this.isClosed) {
      queueMicrotask(() => listener.closed());
      return () => undefined;
    }
    const [map, key] =
      "conversationId" in topic
        ? [this.byConversation, topic.conversationId]
        : [this.byAccount, (topic as { accountId: string }).accountId];
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  }

  /** Calls `l` on every announcement, whatever it names (the dispatcher: new deliveries may be due). */
  onAdvanced(l: () => void): () => void {
    this.anyChange.add(l);
    return () => this.anyChange.delete(l);
  }

  /** Ends every subscription (at shutdown): watchers end their streams, clients resume elsewhere or later. */
  close(): void {
    this.isClosed = true;
    const all = [...this.byConversation.values(), ...this.byAccount.values()];
    this.byConversation.clear();
    this.byAccount.clear();
    this.anyChange.clear();
    for (const set of all) for (const l of set) l.closed();
  }

  /** How many watchers are subscribed. */
  get listeners(): number {
    let n = 0;
    for (const s of this.byConversation.values()) n += s.size;
    for (const s of this.byAccount.values()) n += s.size;
    return n;
  }
}
