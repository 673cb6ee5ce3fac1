import type pg from "pg";
import { type RateLimiterAbstract, RateLimiterPostgres } from "rate-limiter-flexible";
import type { LimitRule } from "../limit-rule.js";
import { checkout, statementFor } from "./db.js";
import { isConnectionLoss, storageError } from "./errors.js";

/**
 * What the library queries through: the pool, with faults classified as for every other statement (a connection
 * that cannot be had, or is lost, is the domain's `unavailable`, 503 with Retry-After), and a checked-out
 * connection listened to, so that the server dropping it cannot end the process.
 */
function classifiedPool(pool: pg.Pool) {
  return {
    async query(q: pg.QueryConfig) {
      const held = await checkout(pool);
      try {
        // rate-limiter-flexible names its statements: not behind a transaction pooler.
        return await held.client.query(statementFor(pool, q));
      } catch (e) {
        if (isConnectionLoss(e)) held.lost ??= e as Error;
        throw storageError(e);
      } finally {
        held.release();
      }
    },
  };
}

/**
 * A rule's counters in PostgreSQL (rate-limiter-flexible's own store), so every instance counts into the same row
 * per key. The table is made by the migrations, not by the library at first use (instances starting at once
 * would race to create it).
 */
export function pgRateLimiter(pool: pg.Pool, rule: LimitRule): RateLimiterAbstract {
  return new RateLimiterPostgres({
    storeClient: classifiedPool(pool),
    storeType: "pool",
    tableName: "rate_limits",
    tableCreated: true,
    keyPrefix: rule.name,
    points: rule.points,
    duration: rule.durationS,
    blockDuration: rule.blockS,
  });
}
