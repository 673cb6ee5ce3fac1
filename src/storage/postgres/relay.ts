import { randomUUID } from "node:crypto";
import type pg from "pg";
import { PgListener } from "./listen.js";

/** What another instance sent, parsed; `undefined` after the listening connection came back (sends were lost). */
export type Received = (wire: Record<string, unknown> | undefined) => void;

/**
 * A NOTIFY channel between the instances on one PostgreSQL: sends JSON stamped with this instance's id, best
 * effort, and hands over what the others sent (an instance has delivered its own locally already).
 */
export class PgRelay {
  private readonly id = randomUUID();
  private readonly listener: PgListener;

  constructor(
    url: string,
    private readonly pool: pg.Pool,
    private readonly channel: string,
    received: Received,
  ) {
    this.listener = new PgListener(url, channel, (payload) => {
      if (payload === undefined) return received(undefined);
      let wire: unknown;
      try {
        wire = JSON.parse(payload);
      } catch {
        return;
      }
      if (wire === null || typeof wire !== "object" || (wire as { from?: unknown }).from === this.id) return;
      received(wire as Record<string, unknown>);
    });
  }

  /** Starts listening; resolves once the channel is subscribed. */
  start(): Promise<void> {
    return this.listener.start();
  }

  send(wire: Record<string, string>): void {
    const payload = JSON.stringify({ ...wire, from: this.id });
    this.pool.query("SELECT pg_notify($1, $2)", [this.channel, payload]).catch(() => undefined);
  }

  close(): void {
    this.listener.close();
  }
}
