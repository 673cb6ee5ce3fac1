import { randomUUID } from "node:crypto";
import pg from "pg";
import type {
  ConversationEvent,
  ConversationEvents,
  EventListener,
  EventTopic,
} from "../../domain/conversation/events.js";
import type { ConversationRepository } from "../../domain/conversation/repository.js";

const CHANNEL = "aiagent_conversation_events";
/** NOTIFY payloads are limited to 8000 bytes: a larger message travels as a reference the receiver reads back. */
const MAX_PAYLOAD = 7000;

/** What goes over the channel: the event itself, or where to read its message. */
type Wire =
  | { from: string; e: ConversationEvent }
  | { from: string; ref: { accountId: string; conversationId: string; messageOrder: number } };

/** Where events of this instance are delivered (the in-process implementation). */
interface Local extends ConversationEvents {
  close(): void;
}

/**
 * ConversationEvents across instances over PostgreSQL LISTEN/NOTIFY: an event is delivered to this instance's
 * listeners at once and sent on the channel; every other instance delivers it to its own listeners. A listener
 * connection that drops is opened again; a watcher that missed events meanwhile resumes from its message_order.
 */
export class PgConversationEvents implements ConversationEvents {
  private readonly id = randomUUID();
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    private readonly local: Local,
    private readonly conversations: ConversationRepository,
  ) {}

  /** Starts listening; resolves once the channel is subscribed. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (n) => void this.received(n.payload));
    client.on("error", () => this.reconnect());
    client.on("end", () => this.reconnect());
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  publish(event: ConversationEvent): void {
    this.local.publish(event);
    let payload = JSON.stringify({ from: this.id, e: event } satisfies Wire);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD && event.type === "message")
      payload = JSON.stringify({
        from: this.id,
        ref: {
          accountId: event.accountId,
          conversationId: event.conversationId,
          messageOrder: event.message.messageOrder,
        },
      } satisfies Wire);
    // Best effort, like any live update: the write is committed already, and watchers resume from message_order.
    this.pool.query("SELECT pg_notify($1, $2)", [CHANNEL, payload]).catch(() => undefined);
  }

  subscribe(topic: EventTopic, listener: EventListener): () => void {
    return this.local.subscribe(topic, listener);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.local.close();
    void this.client?.end().catch(() => undefined);
  }

  private async received(payload: string | undefined): Promise<void> {
    if (!payload) return;
    let wire: Wire;
    try {
      wire = JSON.parse(payload) as Wire;
    } catch {
      return;
    }
    if (wire.from === this.id) return;
    if ("e" in wire) {
      this.local.publish(wire.e);
      return;
    }
    const conv = await this.conversations.byId(wire.ref.conversationId).catch(() => undefined);
    if (!conv) return;
    const page = await this.conversations.messages(conv, 1, wire.ref.messageOrder - 1).catch(() => undefined);
    const message = page?.messages[0];
    if (message)
      this.local.publish({
        type: "message",
        accountId: wire.ref.accountId,
        conversationId: conv.conversationId,
        message,
      });
  }

  private reconnect(): void {
    if (this.closed || this.retry) return;
    this.client = undefined;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start().catch(() => this.reconnect());
    }, 1000);
  }
}
