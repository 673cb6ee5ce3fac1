import { rmSync } from "node:fs";

/**
 * What a test run must not leave behind however it ends (a failure, a time-out, Ctrl-C, the runner stopping a
 * worker): temporary folders, child processes (PgBouncer, an embedded PostgreSQL). Each is registered here with a
 * synchronous clean-up that runs when the process exits or is told to stop (SIGINT, SIGTERM, SIGHUP); the orderly
 * paths (afterAll, a global setup's teardown) still do the full, asynchronous work first and then `forget` it.
 */
const cleanups = new Map<number, () => void>();
let next = 0;
let installed = false;

function runAll(): void {
  for (const [id, c] of [...cleanups].reverse()) {
    cleanups.delete(id);
    try {
      c();
    } catch {
      // Best effort: the rest still runs.
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.once("exit", runAll);
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)
    process.once(signal, () => {
      // Another listener (the runner's own) decides when to exit, and the exit runs the clean-ups; alone, this one
      // does what the signal would have done, through an exit.
      if (process.listenerCount(signal) === 0) process.exit(code);
    });
}

/** Registers a synchronous clean-up for exit or a stop signal; answers the function that forgets it (done in order). */
export function atExit(cleanup: () => void): () => void {
  install();
  const id = next++;
  cleanups.set(id, cleanup);
  return () => void cleanups.delete(id);
}

/** Removes the folder when the process exits, unless forgotten first (the orderly path removed it). */
export function removeAtExit(dir: string): () => void {
  return atExit(() => rmSync(dir, { recursive: true, force: true }));
}

/** Kills the child (SIGKILL: no time is left at exit) when the process exits, unless forgotten first. */
export function killAtExit(child: { exitCode: number | null; kill(signal: NodeJS.Signals): boolean }): () => void {
  return atExit(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
}
