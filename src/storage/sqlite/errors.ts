import { DomainError } from "../../domain/errors.js";

// Disk full, I/O error, file made read-only: faults of the machine, not of the request. The errno codes come
// from the group commit's fsync of the log, which runs outside SQLite.
const FS_FAULTS = new Set(["EIO", "ENOSPC", "EDQUOT", "EROFS"]);

/** A fault of SQLite or of the disk under it as the domain's `unavailable`; anything else unchanged. */
export function storageError(e: unknown): unknown {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return e;
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
    return new DomainError("unavailable", "the database is busy; try again shortly", {
      retryAfterSeconds: 1,
      cause: e,
    });
  if (
    code === "SQLITE_FULL" ||
    code.startsWith("SQLITE_IOERR") ||
    code.startsWith("SQLITE_READONLY") ||
    code === "SQLITE_CANTOPEN" ||
    FS_FAULTS.has(code)
  )
    // Nothing was written (SQLite rolled the statement back); the operator must act, the client may retry later.
    return new DomainError("unavailable", "storage is unavailable; try again later", {
      retryAfterSeconds: 5,
      cause: e,
    });
  return e;
}
