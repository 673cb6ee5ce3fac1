import type {
  ConversationEvent,
  ConversationEvents,
  EventListener,
  EventTopic,
} from "../domain/conversation/events.js";

/** Resolves once every write made so far is on disk; undefined when none is waiting. */
export type DurabilityBarrier = () => Promise<void> | undefined;

/**
 * ConversationEvents within one process. With a durability barrier (group commit), hints wait for the fsync that
 * makes their write durable, so watchers read only what a power cut can no longer take back.
 */
export class InProcessConversationEvents implements ConversationEvents {
  private readonly byConversation = new Map<string, Set<EventListener>>();
  private readonly byAccount = new Map<string, Set<EventListener>>();
  private queue: ConversationEvent[] = [];
  private draining = false;
  private isClosed = false;

  constructor(private readonly barrier: DurabilityBarrier = () => undefined) {}

  publish(event: ConversationEvent): void {
    if (this.isClosed) return;
    // Nobody listens: nothing to keep (the common case costs one map lookup each).
    if (!this.byConversation.has(event.conversationId) && !this.byAccount.has(event.accountId)) return;
    this.queue.push(event);
    if (!this.draining) void this.drain();
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

  /** Tells every listener that anything may have changed (hints may have been lost): each reads from its position. */
  changedAll(): void {
    for (const set of [...this.byConversation.values(), ...this.byAccount.values()]) for (const l of set) l.changed();
  }

  /** Ends every subscription (at shutdown): watchers end their streams, clients resume elsewhere or later. */
  close(): void {
    this.isClosed = true;
    this.queue = [];
    const all = [...this.byConversation.values(), ...this.byAccount.values()];
    this.byConversation.clear();
    this.byAccount.clear();
    for (const set of all) for (const l of set) l.closed();
  }

  /** How many listeners are subscribed. */
  get listeners(): number {
    let n = 0;
    for (const s of this.byConversation.values()) n += s.size;
    for (const s of this.byAccount.values()) n += s.size;
    return n;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const wait = this.barrier();
        // After a failed fsync the writes are still committed and readable (the writer's caller got the error).
        if (wait) await wait.catch(() => undefined);
        const batch = this.queue;
        this.queue = [];
        for (const e of batch) this.deliver(e);
      }
    } finally {
      this.draining = false;
    }
  }

  private deliver(e: ConversationEvent): void {
    for (const set of [this.byConversation.get(e.conversationId), this.byAccount.get(e.accountId)])
      if (set) for (const l of [...set]) l.changed();
  }
}
