import { type RunningPgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { adminUrl } from "../helpers/postgres.js";
import { pgbouncerPath } from "../helpers/system-packages.js";

/** One pooler per run, shared by every project's global setup (each project runs this file). */
interface Shared {
  users: number;
  started: Promise<RunningPgBouncer | undefined>;
}
const KEY = Symbol.for("aiagent.test.pgbouncer");
const holder = globalThis as { [KEY]?: Shared };

/**
 * Starts a PgBouncer of the run's own (transaction pooling) in front of the tests' PostgreSQL server and tells the
 * workers where it listens (AIAGENT_TEST_PGBOUNCER_HOST); the suites through it skip, naming the package, without one.
 * Runs after postgres-run.ts, which may have started the server.
 */
export default async function setup() {
  holder[KEY] ??= { users: 0, started: startIfPossible() };
  const shared = holder[KEY];
  shared.users++;
  const running = await shared.started;
  if (running) process.env.AIAGENT_TEST_PGBOUNCER_HOST = running.host;
  return async () => {
    if (--shared.users > 0) return;
    await (await shared.started)?.stop();
  };
}

async function startIfPossible(): Promise<RunningPgBouncer | undefined> {
  const binary = pgbouncerPath();
  const admin = await adminUrl();
  if (!binary || !admin) return undefined;
  try {
    return await startPgBouncer(binary, admin);
  } catch (e) {
    console.warn(`suites through PgBouncer skipped: ${String(e).split("\n")[0]}`);
    return undefined;
  }
}
