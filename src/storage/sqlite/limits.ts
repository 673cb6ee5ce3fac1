import { type RateLimiterAbstract, RateLimiterMemory } from "rate-limiter-flexible";
import type { LimitRule } from "../limit-rule.js";

/**
 * A rule's counters on the SQLite back end: in this process's memory, because SQLite serves one instance (several
 * run on PostgreSQL), so its count is the whole count.
 */
export function sqliteRateLimiter(rule: LimitRule): RateLimiterAbstract {
  return new RateLimiterMemory({
    keyPrefix: rule.name,
    points: rule.points,
    duration: rule.durationS,
    blockDuration: rule.blockS,
  });
}
