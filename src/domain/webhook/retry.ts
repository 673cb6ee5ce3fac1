/** The Standard Webhooks schedule: after each failed attempt, wait this long (then give up): 27 h 40 min in all. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
];

/**
 * When to try again after `attempts` failed attempts, or null once the schedule is spent. The delay varies by up
 * to a fifth either way (jitter), so endpoints that failed together are not retried together.
 */
export function nextAttempt(
  attempts: number,
  now: number,
  delays: readonly number[],
  random: () => number = Math.random,
): number | null {
  const base = delays[attempts - 1];
  if (base === undefined) return null;
  return now + Math.round(base * (0.8 + 0.4 * random()));
}
