import { withSignals } from "../domain/typing/merge.js";

/** How many slices the open streams are spread over: each tick of the one timer beats one slice. */
const SLICES = 8;

/**
 * Heartbeats of the open watch streams on ONE timer, whatever their number: a stream joins with what to do on its
 * beat, and beats once per interval until it leaves. The streams are spread over a few slices, and the timer beats
 * one slice per tick (every interval ÷ slices), so 20,000 idle streams do not all write in the same millisecond.
 * The timer runs only while a stream is joined, and never keeps the process alive.
 */
export class Heartbeats {
  private readonly slices: Set<() => void>[] = Array.from({ length: SLICES }, () => new Set());
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private joined = 0;
  private next = 0;
  /** Beats sent since start (a counter for tests and metrics). */
  sent = 0;

  /** `intervalMs` 0 turns heartbeats off: joining does nothing. */
  constructor(readonly intervalMs: number) {}

  /** Calls `beat` once per interval until the returned function is called. */
  join(beat: () => void): () => void {
    if (this.intervalMs <= 0) return () => undefined;
    const slice = this.slices[this.next]!;
    this.next = (this.next + 1) % SLICES;
    // A stream's own entry, so the same function joined twice beats twice and leaves once each.
    const entry = () => beat();
    slice.add(entry);
    if (++this.joined === 1) this.start();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      slice.delete(entry);
      if (--this.joined === 0) this.stopTimer();
    };
  }

  /** Streams joined now. */
  get streams(): number {
    return this.joined;
  }

  /** Timers running now: 1 while any stream is joined, else 0 (never one per stream). */
  get timers(): number {
    return this.timer === undefined ? 0 : 1;
  }

  private start(): void {
    const every = Math.max(1, Math.floor(this.intervalMs / SLICES));
    this.timer = setInterval(() => this.beat(), every);
    this.timer.unref();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private beat(): void {
    const slice = this.slices[this.tick]!;
    this.tick = (this.tick + 1) % SLICES;
    for (const beat of slice) {
      this.sent++;
      beat();
    }
  }
}

/** What a stream yields on its beat. */
export const BEAT = { type: "heartbeat" } as const;
export type Beat = typeof BEAT;

/**
 * A stream's items with a heartbeat between them once per interval. The beats start after the stream's first item
 * (once the stream has checked its caller may read it), and stop when the stream ends.
 */
export function withHeartbeats<T>(source: AsyncIterable<T>, heartbeats: Heartbeats): AsyncIterableIterator<T | Beat> {
  return withSignals<T | Beat, true>(source, {
    subscribe: (push) => heartbeats.join(() => push(true)),
    toEvent: () => BEAT,
  });
}
