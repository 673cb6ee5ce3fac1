import { randomBytes } from "node:crypto";
import { embeddedPostgresUnavailable, startEmbeddedPostgres } from "../helpers/embedded-postgres.js";
import { atExit } from "../helpers/leftovers.js";
import { adminUrl, dropRunDatabases, dropSync } from "../helpers/postgres.js";
import { sharedByProjects } from "./shared-by-projects.js";

/**
 * Names this test run's PostgreSQL databases (the workers inherit it) and drops them all when the run ends. When no
 * PostgreSQL answers (AIAGENT_TEST_DATABASE_URL, else 127.0.0.1:5432), starts a throwaway one from embedded-postgres
 * for the run and points AIAGENT_TEST_DATABASE_URL at it; without one, the PostgreSQL suites skip with one line.
 */
export default async function setup() {
  process.env.AIAGENT_TEST_RUN ??= randomBytes(4).toString("hex");
  // One embedded server per run, whichever project's set-up comes first.
  const { value: shared, lastOut } = sharedByProjects("embeddedPostgres", () => ({
    started: startIfNeeded(),
    /** Forgets the drop at exit (the orderly teardown did it). */
    forgetDrop: dropAtExit(),
  }));
  await shared.started;
  return async () => {
    // Only the last project out drops the run's databases (its template among them, which the others' files are
    // still copying).
    if (!lastOut()) return;
    await dropRunDatabases();
    (await shared.forgetDrop)();
    await (await shared.started)?.stop();
  };
}

/**
 * A run that ends without its teardown (Ctrl-C, a SIGTERM from a CI time-out: Vitest then exits at once) still drops
 * its databases: when this process exits, a short child process drops every database of the run (WITH (FORCE), so
 * the connections of workers still finishing a file do not keep one). An embedded server's are gone with it.
 */
async function dropAtExit(): Promise<() => void> {
  const url = await adminUrl();
  if (!url) return () => undefined;
  return atExit(() => dropSync(url, [], true));
}

async function startIfNeeded(): Promise<{ stop(): Promise<void> } | undefined> {
  if (await adminUrl()) return undefined;
  const unavailable = embeddedPostgresUnavailable();
  if (unavailable) return undefined;
  try {
    const server = await startEmbeddedPostgres();
    process.env.AIAGENT_TEST_DATABASE_URL = server.url;
    console.warn("no PostgreSQL server answers: the PostgreSQL suites use a throwaway one from embedded-postgres");
    return server;
  } catch (e) {
    console.warn(`PostgreSQL suites skipped: ${String(e).split("\n")[0]}`);
    return undefined;
  }
}
