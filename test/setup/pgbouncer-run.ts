import { type RunningPgBouncer, startPgBouncer } from "../helpers/pgbouncer.js";
import { adminUrl } from "../helpers/postgres.js";
import { pgbouncerPath } from "../helpers/system-packages.js";
import { sharedByProjects } from "./shared-by-projects.js";

/**
 * Starts a PgBouncer of the run's own (transaction pooling) in front of the tests' PostgreSQL server and tells the
 * workers where it listens (AIAGENT_TEST_PGBOUNCER_HOST); the suites through it skip, naming the package, without one.
 * Runs after postgres-run.ts, which may have started the server.
 */
export default async function setup() {
  // One pooler per run, whichever project's set-up comes first.
  const { value: started, lastOut } = sharedByProjects("pgbouncer", startIfPossible);
  const running = await started;
  if (running) process.env.AIAGENT_TEST_PGBOUNCER_HOST = running.host;
  return async () => {
    if (lastOut()) await (await started)?.stop();
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
