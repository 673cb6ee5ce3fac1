import type { Pool, PoolClient } from "pg";
import { unavailable } from "./errors.js";

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
