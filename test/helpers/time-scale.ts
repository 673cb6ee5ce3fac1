/**
 * One setting for a loaded machine: AIAGENT_TEST_TIME_SCALE (a number, 1 by default, never below 1) multiplies every
 * timeout of the suite, Vitest's test and hook timeouts (vitest.config.ts) and the bounds of the helpers' waits. A
 * wait on a condition ends as soon as it holds, so a larger scale only gives a slow machine more time before a
 * failure is called; it never makes a passing run slower. Bounds that are promises of the product (a revocation
 * within 2 s, the fairness of webhook slots) are not scaled: they are what the test checks.
 */
export const TIME_SCALE = timeScale(process.env.AIAGENT_TEST_TIME_SCALE);

function timeScale(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1)
    throw new Error(`AIAGENT_TEST_TIME_SCALE must be a number of 1 or more, not ${raw}`);
  return n;
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
