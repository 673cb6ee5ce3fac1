import type { Pool, QueryConfig, QueryResult } from "pg";
import { checkout, type HeldConnection } from "./checkout.js";
import { isConnectionLoss, storageError } from "./errors.js";
import { pipeline, type Statement } from "./pipeline.js";

/** At most this many reads go in one round trip (a slow read delays the others of its batch). */
const MAX_BATCH = 8;

/**
 * A statement that only reads, so it may share a round trip with others: a plain SELECT that neither locks rows nor
 * sends a notification (a write, or a statement with a side effect, keeps its own round trip).
 */
export function readOnly(text: string): boolean {
  let known = kinds.get(text);
  if (known === undefined) {
    known = /^\s*SELECT\b/i.test(text) && !/\bpg_notify\b|\bFOR\s+(UPDATE|SHARE|NO\s+KEY|KEY)\b|advisory/i.test(text);
    // The texts are the repositories' own (a few hundred): each is tested once.
    if (kinds.size < 10_000) kinds.set(text, known);
  }
  return known;
}

const kinds = new Map<string, boolean>();

interface Waiting {
  statement: Statement;
  resolve(r: QueryResult): void;
  reject(e: unknown): void;
}

/**
 * Reads made outside a unit of work in the same turn of the event loop (the two sides of a `Promise.all`, say) go
 * to the server together, in one round trip on one pooled connection, each its own statement with its own snapshot
 * (READ COMMITTED), answered in order. A batch is one implicit transaction up to its Sync, so one failing statement
 * fails the others: they are then run again one by one, and each caller gets its own statement's answer.
 */
export class ReadBatcher {
  private queued: Waiting[] = [];

  constructor(private readonly pool: Pool) {}

  read(statement: Statement): Promise<QueryResult> {
    return new Promise((resolve, reject) => {
      // The first read of a turn sends once the turn's other synchronous work and promise reactions ran.
      if (this.queued.length === 0) process.nextTick(() => this.send());
      this.queued.push({ statement, resolve, reject });
    });
  }

  private send(): void {
    const all = this.queued;
    this.queued = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) void this.batch(all.slice(i, i + MAX_BATCH));
  }

  private async batch(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]!);
    let held: HeldConnection;
    try {
      held = await checkout(this.pool);
    } catch (e) {
      for (const w of batch) w.reject(e);
      return;
    }
    let results: QueryResult[];
    try {
      results = await pipeline(
        held.client,
        batch.map((w) => w.statement),
      );
    } catch (e) {
      if (isConnectionLoss(e)) held.lost ??= e as Error;
      held.release();
      for (const w of batch) void this.alone(w);
      return;
    }
    held.release();
    for (const [i, w] of batch.entries()) w.resolve(results[i]!);
  }

  private async alone(w: Waiting): Promise<void> {
    let held: HeldConnection;
    try {
      held = await checkout(this.pool);
    } catch (e) {
      return w.reject(e);
    }
    try {
      w.resolve(await held.client.query(w.statement as QueryConfig));
    } catch (e) {
      if (isConnectionLoss(e)) held.lost ??= e as Error;
      w.reject(storageError(e));
    } finally {
      held.release();
    }
  }
}
