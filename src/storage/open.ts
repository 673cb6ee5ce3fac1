import type { Config } from "../config.js";
import type { Store } from "../domain/store.js";
import { openPgStore } from "./postgres/index.js";
import { type Fsync, openSqliteStore } from "./sqlite/index.js";

export type { Fsync } from "./sqlite/index.js";

/** What a caller may add when opening storage. */
export interface OpenStoreOptions {
  /** SQLite's group-commit fsync (a test holds or fails it). */
  fsync?: Fsync;
  /** Refuse to create a database that does not exist yet. */
  mustExist?: boolean;
}

/** Opens the back end the configuration names (PostgreSQL when it has a database URL), schema brought up to date. */
export async function openStore(config: Config, o: OpenStoreOptions = {}): Promise<Store> {
  if (config.databaseUrl) return openPgStore(config.databaseUrl, { lockTimeoutMs: config.busyTimeoutMs });
  return openSqliteStore(config.dbPath, {
    synchronous: config.synchronous,
    busyTimeoutMs: config.busyTimeoutMs,
    ...(o.fsync ? { fsync: o.fsync } : {}),
    ...(o.mustExist ? { mustExist: true } : {}),
  });
}

export { backupDatabase, restoreDatabase } from "./backup.js";
