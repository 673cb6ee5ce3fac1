import { ChildProcess } from "node:child_process";
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

/** What a helper left open in this test file, closed when the file ends (its own module registers it, once loaded). */
const fileEnd = new Set<() => Promise<void>>();

/**
 * Registers `close` to run when each test file ends (test/setup/leftovers.ts). A helper registers itself when it is
 * loaded, so a file that never loads it (a unit test) does not load the service's modules for its clean-up.
 */
export function atFileEnd(close: () => Promise<void>): void {
  fileEnd.add(close);
}

/** Runs every helper's clean-up of what the file left open (each one's failure does not stop the others). */
export async function closeAtFileEnd(): Promise<void> {
  for (const close of fileEnd) await close().catch(() => undefined);
}

/** Child processes this test process started (any way: spawn, execFile, fork, a library's), until they exit. */
const children = new Set<ChildProcess>();
let tracking = false;

/**
 * Notes every child process started from here on (through ChildProcess.prototype.spawn, which spawn, execFile, exec
 * and fork all go through), so that one a failed or timed-out test left running is stopped when its file ends
 * (`stopChildren`) and, at the latest, killed when this process exits.
 */
export function trackChildren(): void {
  if (tracking) return;
  tracking = true;
  // Node's own method, which its typings do not declare.
  const proto = ChildProcess.prototype as unknown as { spawn: (this: ChildProcess, ...args: unknown[]) => unknown };
  const original = proto.spawn;
  proto.spawn = function (this: ChildProcess, ...args: unknown[]) {
    const r = original.apply(this, args);
    if (this.pid !== undefined) {
      children.add(this);
      const forget = killAtExit(this);
      this.once("exit", () => {
        children.delete(this);
        forget();
      });
    }
    return r;
  };
}

/** esbuild's service process: started once by the esbuild package and reused; it ends with this process. */
const SHARED = /[\\/]esbuild[\\/]|[\\/]@esbuild[\\/]/;

/**
 * Stops the child processes still running (SIGTERM, then SIGKILL after `graceMs`): run when a test file ends, after
 * its own hooks, so only what a failed or timed-out test left behind is still there. Answers what it stopped.
 */
export async function stopChildren(graceMs = 3000): Promise<string[]> {
  const left = [...children].filter((c) => c.exitCode === null && c.signalCode === null && !SHARED.test(c.spawnfile));
  await Promise.all(
    left.map(
      (c) =>
        new Promise<void>((resolve) => {
          const kill = setTimeout(() => c.kill("SIGKILL"), graceMs);
          c.once("exit", () => {
            clearTimeout(kill);
            resolve();
          });
          c.kill("SIGTERM");
        }),
    ),
  );
  return left.map((c) => `${c.pid} ${c.spawnargs.join(" ")}`);
}
