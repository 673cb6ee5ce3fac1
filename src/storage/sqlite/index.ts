export { DatabaseOpenError, type Db, openDatabase } from "./database.js";
export { type Fsync, WalSync } from "./durability.js";
export { storageError } from "./errors.js";
export { readinessProbe } from "./health.js";
export { sqliteRateLimiter } from "./limits.js";
export { type SqliteRepositories, sqliteRepositories } from "./repositories.js";
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from "./store.js";
