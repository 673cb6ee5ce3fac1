/** The source of "now", in epoch milliseconds; injected so tests can move time. */
export interface Clock {
  now(): number;
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() };
