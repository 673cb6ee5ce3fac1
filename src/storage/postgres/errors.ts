import { DomainError } from "../../domain/errors.js";

// SQLSTATE classes and codes that are faults of the server or the network, not of the request.
const BUSY = new Set(["40001", "40P01", "55P03", "57014"]); // serialization, deadlock, lock timeout, statement timeout
const FULL = new Set(["53100", "53200", "53300"]); // disk full, out of memory, too many connections
const NET = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND"]);

/** A PostgreSQL or connection fault as the domain's `unavailable`; anything else unchanged. */
export function storageError(e: unknown): unknown {
  if (e instanceof DomainError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : "";
  if (typeof code === "string" && BUSY.has(code))
    return new DomainError("unavailable", "the database is busy; try again shortly", {
      retryAfterSeconds: 1,
      cause: e,
    });
  if (
    (typeof code === "string" &&
      (FULL.has(code) || code.startsWith("08") || code.startsWith("57P") || NET.has(code))) ||
    /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(message)
  )
    return new DomainError("unavailable", "storage is unavailable; try again later", {
      retryAfterSeconds: 5,
      cause: e,
    });
  return e;
}

/** A fault on the way to the server (no connection could be had): unavailable, whatever its code. */
export function unavailable(e: unknown): DomainError {
  return new DomainError("unavailable", "storage is unavailable; try again later", { retryAfterSeconds: 5, cause: e });
}

/** The connection itself is gone (terminated by the server, network): it must not be reused. */
export function isConnectionLoss(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : "";
  return (
    (typeof code === "string" && (code.startsWith("08") || code.startsWith("57P") || NET.has(code))) ||
    /Connection terminated|Client has encountered a connection error|not queryable/i.test(message)
  );
}
