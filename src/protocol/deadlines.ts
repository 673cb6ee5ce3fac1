/** setTimeout's largest delay (24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Deadlines of the open watch streams (their tokens' expiry) on ONE timer, whatever their number: deadlines are
 * kept in buckets of `resolutionMs`, and the timer is armed for the earliest bucket only. A deadline fires at most
 * `resolutionMs` late, never early.
 */
export class Deadlines {
  private readonly buckets = new Map<number, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private count = 0;

  constructor(private readonly resolutionMs = 1000) {}

  /** Calls `fire` once, `ms` from now, unless the returned function is called first. */
  after(ms: number, fire: () => void): () => void {
    const bucket = Math.ceil((Date.now() + Math.max(0, ms)) / this.resolutionMs);
    let set = this.buckets.get(bucket);
    if (!set) this.buckets.set(bucket, (set = new Set()));
    // Each call its own entry, so the same function scheduled twice fires twice and is cancelled once each.
    const entry = () => fire();
    set.add(entry);
    this.count++;
    if (bucket < this.armedFor) this.arm(bucket);
    return () => {
      if (!set.delete(entry)) return;
      this.count--;
      if (set.size === 0) this.buckets.delete(bucket);
      if (this.count === 0) this.disarm();
    };
  }

  /** Deadlines waiting now. */
  get pending(): number {
    return this.count;
  }

  /** Timers running now: 1 while any deadline waits, else 0 (never one per stream). */
  get timers(): number {
    return this.timer === undefined ? 0 : 1;
  }

  private arm(bucket: number): void {
    clearTimeout(this.timer);
    this.armedFor = bucket;
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, bucket * this.resolutionMs - Date.now()));
    this.timer = setTimeout(() => this.due(), ms);
    this.timer.unref();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  private due(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now() / this.resolutionMs;
    let next = Number.POSITIVE_INFINITY;
    const fired: (() => void)[] = [];
    for (const [bucket, set] of this.buckets) {
      if (bucket <= now) {
        this.buckets.delete(bucket);
        this.count -= set.size;
        fired.push(...set);
        // Cancelling one of these afterwards must find nothing to take back.
        set.clear();
      } else if (bucket < next) next = bucket;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    for (const f of fired) f();
  }
}
