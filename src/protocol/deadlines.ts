/** setTimeout's largest delay (24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** What a deadline fires: an object (a watch stream's slot), so that a deadline costs no closure of its own. */
export interface Expiring {
  expire(): void;
}

/** A deadline `after` made of a function: its own entry, so the same function scheduled twice fires twice. */
class Called implements Expiring {
  constructor(private readonly fire: () => void) {}
  expire(): void {
    this.fire();
  }
}

/**
 * Deadlines of the open watch streams (their tokens' expiry) on ONE timer, whatever their number: deadlines are
 * kept in buckets of `resolutionMs`, and the timer is armed for the earliest bucket only. A deadline fires at most
 * `resolutionMs` late, never early.
 */
export class Deadlines {
  private readonly buckets = new Map<number, Set<Expiring>>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private count = 0;

  constructor(private readonly resolutionMs = 1000) {}

  /** Calls `fire` once, `ms` from now, unless the returned function is called first. */
  after(ms: number, fire: () => void): () => void {
    const entry = new Called(fire);
    const bucket = this.hold(ms, entry);
    return () => this.drop(entry, bucket);
  }

  /**
   * Calls `target.expire()` once, `ms` from now, unless `drop(target, bucket)` is called first with the bucket this
   * returns. One entry per target: a target held twice at once is held once. What an idle watch stream keeps for its
   * deadline is then a number, not two closures and their context (docs/live-updates.md, session 23).
   */
  hold(ms: number, target: Expiring): number {
    const bucket = Math.ceil((Date.now() + Math.max(0, ms)) / this.resolutionMs);
    let set = this.buckets.get(bucket);
    if (!set) this.buckets.set(bucket, (set = new Set()));
    if (set.has(target)) return bucket;
    set.add(target);
    this.count++;
    if (bucket < this.armedFor) this.arm(bucket);
    return bucket;
  }

  /** Takes back a deadline `hold` made; nothing when it fired already or was taken back. */
  drop(target: Expiring, bucket: number): void {
    const set = this.buckets.get(bucket);
    if (!set?.delete(target)) return;
    this.count--;
    if (set.size === 0) this.buckets.delete(bucket);
    if (this.count === 0) this.disarm();
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
    const fired: Expiring[] = [];
    for (const [bucket, set] of this.buckets) {
      if (bucket <= now) {
        // Taken out of the map first: dropping one of these afterwards finds nothing to take back.
        this.buckets.delete(bucket);
        this.count -= set.size;
        fired.push(...set);
      } else if (bucket < next) next = bucket;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    for (const f of fired) f.expire();
  }
}
