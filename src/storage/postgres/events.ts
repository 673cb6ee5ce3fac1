import type pg from "pg";
import type {
  ConversationEvent,
  ConversationEvents,
  EventListener,
  EventTopic,
} from "../../domain/conversation/events.js";
import { PgRelay } from "./relay.js";

const CHANNEL = "aiagent_conversation_events";

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
  private readonly relay: PgRelay;

  constructor(
    url: string,
    pool: pg.Pool,
    private readonly local: Local,
  ) {
    this.relay = new PgRelay(url, pool, CHANNEL, (wire) => this.received(wire));
  }

  /** Starts listening; resolves once the channel is subscribed. */
  start(): Promise<void> {
    return this.relay.start();
  }

  publish(event: ConversationEvent): void {
    this.local.publish(event);
    // Best effort: the change is in the log already; a lost hint only delays watchers until their next look.
    this.relay.send({ a: event.accountId, c: event.conversationId });
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    return this.local.subscribe(topic, listener);
  }

  close(): void {
    this.relay.close();
    this.local.close();
  }

  /** What another instance sent: which conversation changed (`from` says who; it ignores its own). */
  private received(wire: Record<string, unknown> | undefined): void {
    // Undefined: the connection came back; anything may have changed meanwhile.
    if (wire === undefined) {
      this.local.changedAll();
      return;
    }
    if (typeof wire.a !== "string" || typeof wire.c !== "string") return;
    this.local.publish({ accountId: wire.a, conversationId: wire.c });
  }
}
