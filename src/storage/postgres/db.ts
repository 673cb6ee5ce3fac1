import { AsyncLocalStorage } from "node:async_hooks";
import type { Pool, PoolClient, QueryResultRow } from "pg";
import { isConnectionLoss, storageError, unavailable } from "./errors.js";

/** How often a unit of work is tried before a serialization conflict reaches the caller. */
const MAX_ATTEMPTS = 8;

/** What the repositories run SQL through: the open unit of work's connection, or the pool. */
export interface PgDb {
  /** A named (prepared once per connection) statement. */
  rows<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]>;
  /** How many rows a named statement changed. */
  count(name: string, text: string, values: unknown[]): Promise<number>;
  /** Runs fn in the open unit of work, or in a new one (READ COMMITTED: the statements' row locks order writers). */
  unit<T>(fn: () => Promise<T>): Promise<T>;
}

/** Routes statements to the connection of the unit of work running in this async context, else to the pool. */
export class PgRunner implements PgDb {
  private readonly current = new AsyncLocalStorage<PoolClient>();
  /** Units of work run again after a conflict, since start (a metric). */
  retries = 0;

  constructor(private readonly pool: Pool) {}

  async rows<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return (await this.query<R>(name, text, values)).rows;
  }

  async count(name: string, text: string, values: unknown[]): Promise<number> {
    return (await this.query(name, text, values)).rowCount ?? 0;
  }

  unit<T>(fn: () => Promise<T>): Promise<T> {
    return this.current.getStore() ? fn() : this.begin("BEGIN", fn);
  }

  /**
   * A unit of work as SERIALIZABLE as SQLite's (which runs one writer at a time): PostgreSQL aborts one of two that
   * would interleave, and it is run again from the start, a few times, before the caller gets `busy`. The callback
   * must therefore touch nothing but the store.
   */
  async serializable<T>(fn: () => Promise<T>): Promise<T> {
    if (this.current.getStore()) return fn();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.begin("BEGIN ISOLATION LEVEL SERIALIZABLE", fn);
      } catch (e) {
        const code = (e as { extra?: { cause?: { code?: string } } }).extra?.cause?.code;
        if ((code !== "40001" && code !== "40P01") || attempt >= MAX_ATTEMPTS) throw e;
        this.retries++;
        await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
      }
    }
  }

  private async begin<T>(begin: string, fn: () => Promise<T>): Promise<T> {
    const held = await checkout(this.pool);
    const { client } = held;
    try {
      await client.query(begin);
      const result = await this.current.run(client, fn);
      await client.query("COMMIT");
      return result;
    } catch (e) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        // The connection is gone (killed, server restarted): it must not go back to the pool.
        held.lost ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw storageError(e);
    } finally {
      held.release();
    }
  }

  private async query<R extends QueryResultRow>(name: string, text: string, values: unknown[]) {
    const current = this.current.getStore();
    if (current) {
      try {
        return await current.query<R>({ name, text, values });
      } catch (e) {
        throw storageError(e);
      }
    }
    const held = await checkout(this.pool);
    try {
      return await held.client.query<R>({ name, text, values });
    } catch (e) {
      if (isConnectionLoss(e)) held.lost ??= e as Error;
      throw storageError(e);
    } finally {
      held.release();
    }
  }
}

/** A pooled connection held by one caller; `lost` is set once the connection failed, and it is then not reused. */
export interface HeldConnection {
  client: PoolClient;
  lost: Error | undefined;
  /** Back to the pool, or destroyed when it was lost. */
  release(): void;
}

/**
 * Checks a connection out of the pool, listening for its errors. The pool listens only while a connection is idle;
 * a checked-out one the server drops emits `error`, which with no listener would end the process. The listener is
 * attached in the pool's callback, not after an await: a connection terminated just as it was made delivers its
 * FATAL in the same read as its ReadyForQuery, before any promise continuation could run.
 */
export function checkout(pool: Pool): Promise<HeldConnection> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      // No connection to be had (server away, refusing connections, pool exhausted): the request may be retried.
      if (err || !client) return reject(unavailable(err));
      const held: HeldConnection = {
        client,
        lost: undefined,
        release() {
          client.removeListener("error", onError);
          client.release(held.lost);
        },
      };
      const onError = (e: Error) => {
        held.lost ??= e;
      };
      client.on("error", onError);
      resolve(held);
    });
  });
}
