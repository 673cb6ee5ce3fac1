import { DONE, type Readiness, takeNow, whenReady } from "../streams.js";

/** Signals waiting to be sent on one stream; more than this and the oldest are dropped (they are only hints). */
const MAX_WAITING = 32;

/**
 * A stream's events with pushed signals in between. `subscribe` is called only once the source has given its first
 * event, that is once the source has checked the caller may read it, so no signal reaches a caller the stream would
 * have refused.
 *
 * Not a generator (see domain/streams.ts): while the stream waits, it holds one read of the source and one waiting
 * reader; an event costs one reaction on the read, and a signal none.
 */
export function withSignals<T, S>(source: AsyncIterable<T>, signals: SignalSource<T, S>): AsyncIterableIterator<T> {
  return new WithSignals(source[Symbol.asyncIterator](), signals);
}

/** Where a stream's signals come from (`withSignals`): an object, so that it can be the stream's mapper too. */
export interface SignalSource<T, S> {
  /** Starts the signals; returns what stops them. */
  subscribe(push: (s: S) => void): () => void;
  /** A signal as an event of the stream; undefined: not for this stream. */
  toEvent(s: S): T | undefined;
}

type Settled<T> = { r: IteratorResult<T> } | { e: unknown };

class WithSignals<T, S> implements AsyncIterableIterator<T>, Readiness<T> {
  private readonly waiting: S[] = [];
  private stop: (() => void) | undefined;
  /** The source's read in flight; its outcome once it settled and was not taken yet. */
  private read: Promise<IteratorResult<T>> | undefined;
  private settled: Settled<T> | undefined;
  /** The reader waiting for the next event. */
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private finished = false;
  private readonly onSettled = (r: IteratorResult<T>) => this.took({ r });
  private readonly onFailed = (e: unknown) => this.took({ e });
  /** Told once `next` is worth calling (Readiness): a signal pushed, or the source ready. */
  private onReady: (() => void) | undefined;
  private readonly fire = () => {
    const r = this.onReady;
    this.onReady = undefined;
    r?.();
  };
  private readonly push = (s: S) => {
    if (this.waiting.push(s) > MAX_WAITING) this.waiting.shift();
    this.wake();
    this.fire();
  };

  constructor(
    private readonly it: AsyncIterator<T>,
    private readonly signals: SignalSource<T, S>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  whenReady(cb: () => void): void {
    if (this.finished || this.waiting.length > 0 || this.settled || this.read) {
      cb();
      return;
    }
    this.onReady = cb;
    whenReady(this.it, this.fire);
  }

  takeNow(): IteratorResult<T> | undefined {
    if (this.finished) return DONE;
    if (this.waiter) return undefined;
    const got = this.ready();
    if (got) {
      if ("e" in got) throw got.e;
      return got.r;
    }
    if (this.read) return undefined;
    let r: IteratorResult<T> | undefined;
    try {
      r = takeNow<T>(this.it);
    } catch (e) {
      this.end();
      throw e;
    }
    if (!r) return undefined;
    // As `ready` takes a settled read: the end ends it, an event subscribes to the signals (once).
    if (r.done) this.end();
    else this.stop ??= this.signals.subscribe(this.push);
    return r;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.finished) return Promise.resolve(DONE);
    const got = this.ready();
    if (got) return "e" in got ? Promise.reject(got.e) : Promise.resolve(got.r);
    if (!this.read) {
      this.read = this.it.next();
      this.read.then(this.onSettled, this.onFailed);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    const pending = this.read !== undefined;
    this.end();
    const w = this.waiter;
    this.waiter = undefined;
    w?.resolve(DONE);
    // With a read pending, the source's return is queued behind it (the stream's abort signal ends that read).
    if (pending) {
      void this.it.return?.()?.catch(() => undefined);
      return Promise.resolve(DONE);
    }
    return this.it.return ? this.it.return().then(() => DONE) : Promise.resolve(DONE);
  }

  private took(s: Settled<T>): void {
    this.read = undefined;
    if (this.finished) return;
    this.settled = s;
    this.wake();
  }

  /** What the reader gets now, if anything: the signals first, then the source's settled read. */
  private ready(): Settled<T> | undefined {
    while (this.waiting.length > 0) {
      const e = this.signals.toEvent(this.waiting.shift()!);
      if (e !== undefined) return { r: { done: false, value: e } };
    }
    const got = this.settled;
    if (!got) return undefined;
    this.settled = undefined;
    if ("e" in got || got.r.done) this.end();
    else this.stop ??= this.signals.subscribe(this.push);
    return got;
  }

  private wake(): void {
    const w = this.waiter;
    if (!w) return;
    // Taken while it looks: a signal pushed meanwhile (a subscription that pushes at once) waits for the next read.
    this.waiter = undefined;
    const got = this.ready();
    if (!got) {
      this.waiter = w;
      return;
    }
    if ("e" in got) w.reject(got.e);
    else w.resolve(got.r);
  }

  private end(): void {
    this.finished = true;
    this.stop?.();
    this.stop = undefined;
    this.waiting.length = 0;
  }
}
