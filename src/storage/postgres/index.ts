export { storageError } from "./errors.js";
export { pgRateLimiter } from "./limits.js";
export { openPgStore, PgStore, type PgStoreOptions, redact } from "./store.js";
