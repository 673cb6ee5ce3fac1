import { afterAll } from "vitest";
import { closeAtFileEnd, stopChildren, trackChildren } from "../helpers/leftovers.js";

// Every child process the file starts (a served instance, an example's server, PgBouncer, PostgreSQL, Chromium) is
// noted, so that it is stopped however the file ends.
trackChildren();

// The environment as the file found it, put back when it ends: a worker may run several files one after another
// (vitest.config.ts), and a variable one file set must not reach the next.
const environment = { ...process.env };

// Registered before the file's own hooks, so it runs after them: whatever a failed or timed-out test left open
// (servers, their PostgreSQL databases, child processes, temporary folders) is closed when the file ends, pass or
// fail.
afterAll(async () => {
  // Servers (test/helpers/server.ts registers closeLeftovers once a file loads it), then what still runs.
  await closeAtFileEnd();
  const stopped = await stopChildren();
  if (stopped.length > 0) console.warn(`stopped child processes the file left running:\n  ${stopped.join("\n  ")}`);
  for (const name of Object.keys(process.env)) if (!(name in environment)) delete process.env[name];
  Object.assign(process.env, environment);
});
