import type {
  ConversationEvent,
  ConversationEvents,
  EventListener,
  EventTopic,
} from "../../domain/conversation/events.js";
import { PgListener } from "./listen.js";

export const CHANNEL = "aiagent_conversation_events";

/**
 * What goes over the channel: which conversation changed, and who sent it (an instance ignores its own). The event
 * log's append sends it (pgEvents), in the unit of work that records the change.
 */
interface Wire {
  from: string;
  a: string;
  c: string;
}

/** Where hints are delivered on this instance (the in-process implementation). */
interface Local extends ConversationEvents {
  changedAll(): void;
  close(): void;
}

/**
 * ConversationEvents across instances over PostgreSQL LISTEN/NOTIFY. Only hints travel (which conversation
 * changed): watchers read what changed from the event log, so a notification that is late, reordered or lost
 * costs nothing but a delay. After the listening connection comes back, every watcher of this instance reads
 * again from its position, since notifications sent meanwhile are gone.
 */
export class PgConversationEvents implements ConversationEvents {
  private readonly listener: PgListener;

  /** @param id this instance on the channel, as its event log's appends name it. */
  constructor(
    url: string,
    private readonly id: string,
    private readonly local: Local,
  ) {
    this.listener = new PgListener(url, CHANNEL, (payload) => this.received(payload));
  }

  /** Starts listening; resolves once the channel is subscribed. */
  start(): Promise<void> {
    return this.listener.start();
  }

  /**
   * Every change published here recorded its events in the unit of work just committed, and their append hinted
   * the other instances at that commit: only this instance's watchers are left to tell.
   */
  publish(event: ConversationEvent): void {
    this.local.publish(event);
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    return this.local.subscribe(topic, listener);
  }

  close(): void {
    this.listener.close();
    this.local.close();
  }

  private received(payload: string | undefined): void {
    // Undefined: the connection came back; anything may have changed meanwhile.
    if (payload === undefined) {
      this.local.changedAll();
      return;
    }
    let wire: Wire;
    try {
      wire = JSON.parse(payload) as Wire;
    } catch {
      return;
    }
    if (wire.from === this.id || typeof wire.a !== "string" || typeof wire.c !== "string") return;
    this.local.publish({ accountId: wire.a, conversationId: wire.c });
  }
}
