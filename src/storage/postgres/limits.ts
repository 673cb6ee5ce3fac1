import type pg from "pg";
import { type RateLimiterAbstract, RateLimiterPostgres } from "rate-limiter-flexible";

/** One abuse-limit rule, as rate-limiter-flexible counts it. */
export interface PgLimitRule {
  name: string;
  points: number;
  durationS: number;
  blockS: number;
}

/**
 * A rule's counters in PostgreSQL (rate-limiter-flexible's own store), so every instance counts into the same row
 * per key. The table is made by the migrations, not by the library at first use (instances starting at once
 * would race to create it).
 */
export function pgRateLimiter(pool: pg.Pool, rule: PgLimitRule): RateLimiterAbstract {
  return new RateLimiterPostgres({
    storeClient: pool,
    storeType: "pool",
    tableName: "rate_limits",
    tableCreated: true,
    keyPrefix: rule.name,
    points: rule.points,
    duration: rule.durationS,
    blockDuration: rule.blockS,
  });
}
