import type { RateLimiterAbstract } from "rate-limiter-flexible";
import type { Config } from "../config.js";
import type { Store } from "../domain/store.js";
import type { LimitRule } from "./limit-rule.js";
import { openPgStore, pgRateLimiter } from "./postgres/index.js";
import { type Fsync, openSqliteStore, sqliteRateLimiter } from "./sqlite/index.js";

export type { LimitRule } from "./limit-rule.js";
export type { Fsync } from "./sqlite/index.js";

/** What a caller may add when opening storage. */
export interface OpenStoreOptions {
  /** SQLite's group-commit fsync (a test holds or fails it). */
  fsync?: Fsync;
  /** Refuse to create a database that does not exist yet. */
  mustExist?: boolean;
}

/** The configured back end: the storage port, and the parts beside it that depend on which back end runs. */
export interface Backend {
  store: Store;
  /**
   * The counters of one abuse-limit rule, where every instance on this storage counts together: PostgreSQL's
   * table, or this process's memory on SQLite (which serves one instance).
   */
  rateLimiter(rule: LimitRule): RateLimiterAbstract;
}

/** Opens the back end the configuration names (PostgreSQL when it has a database URL), schema brought up to date. */
export async function openStore(config: Config, o: OpenStoreOptions = {}): Promise<Backend> {
  if (config.databaseUrl) {
    const store = await openPgStore(config.databaseUrl, {
      lockTimeoutMs: config.busyTimeoutMs,
      poolSize: config.postgres.poolSize,
      pooler: config.postgres.pooler,
      ...(config.postgres.listenUrl ? { listenUrl: config.postgres.listenUrl } : {}),
    });
    return { store, rateLimiter: (rule) => pgRateLimiter(store.pool, rule) };
  }
  const store = openSqliteStore(config.dbPath, {
    synchronous: config.synchronous,
    busyTimeoutMs: config.busyTimeoutMs,
    ...(o.fsync ? { fsync: o.fsync } : {}),
    ...(o.mustExist ? { mustExist: true } : {}),
  });
  return { store, rateLimiter: sqliteRateLimiter };
}

export { backupDatabase, restoreDatabase } from "./backup.js";
