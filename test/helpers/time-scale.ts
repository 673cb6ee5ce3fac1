import { availableParallelism, loadavg } from "node:os";

/**
 * One setting for a loaded machine: AIAGENT_TEST_TIME_SCALE (a number, never below 1) multiplies every timeout of the
 * suite, Vitest's test and hook timeouts (vitest.config.ts) and the bounds of the helpers' waits. A wait on a
 * condition ends as soon as it holds, so a larger scale only gives a slow machine more time before a failure is
 * called; it never makes a passing run slower. Bounds that are promises of the product (a revocation within 2 s, the
 * fairness of webhook slots) are not scaled: they are what the test checks.
 *
 * Unset (or "auto"), the scale follows the machine's load when the run starts (see loadScale): 1 on a quiet machine,
 * more on a busy one, so a run beside other work needs no setting. The run's main process works it out once and
 * hands it to its workers in the variable, so every file of a run has the same scale.
 */
/** How many files run at once: AIAGENT_TEST_WORKERS, 2 unless set. */
export const TEST_WORKERS = workerCount(process.env.AIAGENT_TEST_WORKERS);

function workerCount(value: string | undefined): number {
  if (value === undefined || value === "") return 2;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`AIAGENT_TEST_WORKERS must be a whole number of at least 1, not "${value}"`);
  return n;
}

const raw = process.env.AIAGENT_TEST_TIME_SCALE;
/** How the scale was chosen, for the run's first lines. */
export const TIME_SCALE_SOURCE =
  raw === undefined || raw === "" || raw === "auto"
    ? `from the load: ${loadavg()[0]!.toFixed(1)} over the last minute on ${availableParallelism()} cores`
    : "set";
export const TIME_SCALE = timeScale(raw);
process.env.AIAGENT_TEST_TIME_SCALE = String(TIME_SCALE);

function timeScale(value: string | undefined): number {
  if (value === undefined || value === "" || value === "auto") return loadScale();
  const n = Number(value);
  if (!Number.isFinite(n) || n < 1)
    throw new Error(`AIAGENT_TEST_TIME_SCALE must be "auto" or a number of 1 or more, not ${value}`);
  return n;
}

/**
 * How much slower than on a quiet machine the run's work will go, from the load average: the run's own workers plus
 * what already runs, per core (one decimal, at least 1). A quiet 2-core machine gives 1; two busy loops pinning both
 * cores give 2; a machine that other work keeps at load 16 gives 9. The load average follows a minute behind, so
 * start the busy loops (or the other work) a minute before the run when trying this.
 */
export function loadScale(load = loadavg()[0]!, cores = availableParallelism(), workers = TEST_WORKERS): number {
  return Math.max(1, Math.round(((load + workers) / cores) * 10) / 10);
}

/** A generous bound (a timeout, a wait's limit), scaled by AIAGENT_TEST_TIME_SCALE. */
export function scaled(ms: number): number {
  return Math.round(ms * TIME_SCALE);
}

/**
 * Waits until `ok` holds, checking every `stepMs`; throws naming `what` once `ms` (scaled) have passed without it.
 * The way to wait for something in a test: never a fixed sleep.
 */
export async function waitFor(
  what: string,
  ok: () => boolean | Promise<boolean>,
  o: { ms?: number; stepMs?: number } = {},
): Promise<void> {
  const end = Date.now() + scaled(o.ms ?? 10_000);
  for (;;) {
    if (await ok()) return;
    if (Date.now() > end) throw new Error(`never happened within ${scaled(o.ms ?? 10_000)} ms: ${what}`);
    await new Promise((r) => setTimeout(r, o.stepMs ?? 20));
  }
}
