import type {
  ConversationEvent,
  ConversationEvents,
  EventListener,
  EventTopic,
} from "../domain/conversation/events.js";
import { TopicListeners } from "./topics.js";

/** Resolves once every write made so far is on disk; undefined when none is waiting. */
export type DurabilityBarrier = () => Promise<void> | undefined;

/**
 * ConversationEvents within one process. With a durability barrier (group commit), hints wait for the fsync that
 * makes their write durable, so watchers read only what a power cut can no longer take back.
 */
export class InProcessConversationEvents implements ConversationEvents {
  private readonly topics = new TopicListeners<EventListener>();
  private queue: ConversationEvent[] = [];
  private draining = false;
  private isClosed = false;

  constructor(private readonly barrier: DurabilityBarrier = () => undefined) {}

  publish(event: ConversationEvent): void {
    if (this.isClosed) return;
    // Nobody listens: nothing to keep (the common case costs one map lookup each).
    if (!this.topics.has(event.accountId, event.conversationId)) return;
    this.queue.push(event);
    if (!this.draining) void this.drain();
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    if (this.isClosed) {
      queueMicrotask(() => listener.closed());
      return () => undefined;
    }
    return this.topics.add(topic, listener);
  }

  /** Tells every listener that anything may have changed (hints may have been lost): each reads from its position. */
  changedAll(): void {
    for (const l of this.topics.all()) l.changed();
  }

  /** Ends every subscription (at shutdown): watchers end their streams, clients resume elsewhere or later. */
  close(): void {
    this.isClosed = true;
    this.queue = [];
    const all = this.topics.all();
    this.topics.clear();
    for (const l of all) l.closed();
  }

  /** How many listeners are subscribed. */
  get listeners(): number {
    return this.topics.all().length;
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
    for (const l of this.topics.of(e.accountId, e.conversationId)) l.changed();
  }
}
