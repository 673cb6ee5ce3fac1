import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { EventTopic } from "../../domain/conversation/events.js";
import type { TypingChannel, TypingSignal } from "../../domain/typing/channel.js";
import { PgListener } from "./listen.js";

const CHANNEL = "aiagent_typing";

/** What goes over the channel; `i` is the sending instance (it delivered its own signal locally already). */
interface Wire {
  i: string;
  a: string;
  c: string;
  f: string;
  n: string;
}

interface Local extends TypingChannel {
  close(): void;
}

/**
 * Typing signals across instances over PostgreSQL NOTIFY. Nothing is stored: a signal sent while an instance's
 * listening connection is down is lost, which only leaves an indicator unshown for a moment.
 */
export class PgTyping implements TypingChannel {
  private readonly id = randomUUID();
  private readonly listener: PgListener;

  constructor(
    url: string,
    private readonly pool: pg.Pool,
    private readonly local: Local,
  ) {
    this.listener = new PgListener(url, CHANNEL, (payload) => this.received(payload));
  }

  start(): Promise<void> {
    return this.listener.start();
  }

  publish(s: TypingSignal): void {
    this.local.publish(s);
    const wire: Wire = { i: this.id, a: s.accountId, c: s.conversationId, f: s.from, n: s.name };
    this.pool.query("SELECT pg_notify($1, $2)", [CHANNEL, JSON.stringify(wire)]).catch(() => undefined);
  }

  subscribe(topic: EventTopic, listener: (signal: TypingSignal) => void): () => void {
    return this.local.subscribe(topic, listener);
  }

  close(): void {
    this.listener.close();
    this.local.close();
  }

  private received(payload: string | undefined): void {
    if (payload === undefined) return;
    let w: Wire;
    try {
      w = JSON.parse(payload) as Wire;
    } catch {
      return;
    }
    if (w.i === this.id || typeof w.a !== "string" || typeof w.c !== "string" || typeof w.n !== "string") return;
    if (w.f !== "user" && w.f !== "operator") return;
    this.local.publish({ accountId: w.a, conversationId: w.c, from: w.f, name: w.n });
  }
}
