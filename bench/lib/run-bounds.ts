import type { ServerProcess } from "./procs.js";

/**
 * What every bench run starts with: a log line on stderr prefixed with the run's name and its seconds so far, and a
 * whole-run watchdog that stops the servers it started and exits 3, so a stuck child can never hold the machine.
 */
export function runBounds(name: string, watchdogMs: number) {
  const started = Date.now();
  const log = (s: string) =>
    process.stderr.write(`[${name} ${((Date.now() - started) / 1000).toFixed(0).padStart(3)}s] ${s}\n`);
  const servers: ServerProcess[] = [];
  const watchdog = setTimeout(() => {
    log(`stopped: the run took longer than ${watchdogMs / 60_000} minutes`);
    for (const s of servers) void s.stop();
    process.exit(3);
  }, watchdogMs);
  watchdog.unref();
  return { started, log, servers, watchdog };
}
