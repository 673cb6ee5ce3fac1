export { storageError } from "./errors.js";
export { openPgStore, PgStore, type PgStoreOptions, redact } from "./store.js";
