import { createServer, type Server } from "node:http";
import type { Config } from "../config.js";
import { isDomainError } from "../domain/errors.js";
import { StoreOpenError } from "../domain/store.js";
import type { Logger } from "../log.js";

/** The first wait after a failed attempt, and the longest (each wait doubles). */
const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 15_000;

/** Error codes of a PostgreSQL server that is away, starting or stopping (not of one that refused us). */
const AWAY_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: the database system is starting up
]);

/** Whether opening the store failed because the database server is away (rather than misconfigured). */
export function databaseAway(e: unknown): boolean {
  if (!(e instanceof StoreOpenError)) return false;
  for (let c: unknown = e.cause; c; c = (c as { cause?: unknown }).cause) {
    // The back end's own finding: the server is away or cannot take connections now.
    if (isDomainError(c) && c.kind === "unavailable") return true;
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && AWAY_CODES.has(code)) return true;
    const message = String((c as { message?: unknown }).message ?? "");
    if (/connection terminated|timeout expired|starting up|shutting down/i.test(message)) return true;
  }
  return false;
}

/**
 * Builds the service once its database answers: while PostgreSQL is away (not yet started, restarting, unreachable)
 * it tries again with back-off, never exiting for that reason, and meanwhile answers on the service's port: `/healthz`
 * 200 (the process runs), `/readyz` 503 with the reason, every other request 503 with `Retry-After`. Any other
 * failure (a wrong password, a schema that is not ours) is thrown as before.
 */
export async function buildWhenDatabaseAnswers<T>(
  config: Config,
  log: Logger,
  build: () => Promise<T>,
  waits: { firstMs: number; longestMs: number } = { firstMs: FIRST_WAIT_MS, longestMs: LONGEST_WAIT_MS },
): Promise<T> {
  let waiting: Server | undefined;
  let reason = "";
  let wait = waits.firstMs;
  for (;;) {
    try {
      const built = await build();
      if (waiting) await stop(waiting);
      if (waiting) log.info("the database answers: starting");
      return built;
    } catch (e) {
      if (!databaseAway(e)) {
        if (waiting) await stop(waiting);
        throw e;
      }
      reason = `waiting for the database: ${(e as Error).message}`;
      log.warn("the database does not answer yet: waiting for it", { retryInMs: wait, error: (e as Error).message });
      waiting ??= await listenWaiting(config, () => reason);
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, waits.longestMs);
    }
  }
}

function listenWaiting(config: Config, reason: () => string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers });
      res.end(req.method === "HEAD" ? undefined : JSON.stringify(body));
    };
    if (path === "/healthz") return send(200, { status: "ok" });
    if (path === "/readyz") return send(503, { status: "unavailable", reason: reason() });
    send(
      503,
      { code: "unavailable", message: "the service is starting: it waits for its database" },
      { "retry-after": "5" },
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve(server));
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
