/** One abuse-limit rule as each back end's counters take it: at most `points` hits per `durationS` seconds per key. */
export interface LimitRule {
  name: string;
  points: number;
  durationS: number;
  blockS: number;
}
