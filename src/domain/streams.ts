/**
 * Stream layers that add no async generator of their own. A watch stream's event passes every layer between the log
 * reader and the socket; an async generator layer costs several promises per event, and while the stream waits for
 * its next event (seconds, under fan-out) they stay pending, outlive the young generation and are promoted: the
 * collector's work grows with the number of open streams. These forward to the inner stream instead.
 */

/** A synchronous step's answer: nothing without a wait; the asynchronous path must run. */
export const LATER: unique symbol = Symbol("later");

/** The result of a stream that ended. */
export const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * A stream that can hand what it has at once, and say when it will have something: the push path of a stream that
 * is caught up. Under fan-out, a `next` held pending through every layer is a chain of promises per stream, made
 * again for each event; with these, a caught-up stream waits on one callback (`whenReady`) and its events pass every
 * layer synchronously (`takeNow`), with no promise of their own. Both are optional: `next` stays the pull path
 * (catching up, backpressure, a layer that must wait), always correct to call.
 */
export interface Readiness<T = unknown> {
  /**
   * Calls `cb` once (perhaps at once) when `takeNow` or `next` may have something, or the stream may have ended; a
   * later call replaces the earlier callback. A layer that cannot tell calls `cb` at once.
   */
  whenReady(cb: () => void): void;
  /**
   * The next item if it is there now, without waiting (DONE once the stream ended; throws as `next` would reject);
   * undefined when there is none now or it would need a wait (then `next`, or `whenReady` first).
   */
  takeNow?(): IteratorResult<T> | undefined;
}

/** Calls `cb` when `it`'s `next` is worth calling: as `it` says when it can tell (Readiness), else at once. */
export function whenReady(it: object, cb: () => void): void {
  const r = (it as Partial<Readiness>).whenReady;
  if (typeof r === "function") r.call(it, cb);
  else cb();
}

/** `it`'s next item if it can hand it at once (Readiness.takeNow); undefined otherwise. */
export function takeNow<T>(it: object): IteratorResult<T> | undefined {
  const t = (it as Partial<Readiness<T>>).takeNow;
  return typeof t === "function" ? t.call(it) : undefined;
}

/**
 * The stream `open` resolves to, opened at the first `next` (as a generator's body would be): after that, each `next`
 * is the inner stream's own, nothing added per event. `open` failing fails the first `next`; the stream is then done.
 */
export function deferred<T>(open: () => Promise<AsyncIterable<T>> | AsyncIterable<T>): AsyncIterableIterator<T> {
  return new Deferred(open);
}

// The layers below are classes, not objects of closures: an idle stream keeps each of them for its whole life, and a
// layer of closures (each with its context, a computed `[Symbol.asyncIterator]` naming a closure per instance) costs
// about ten times the heap of one object whose methods are on its prototype (docs/live-updates.md, session 22).

class Deferred<T> implements AsyncIterableIterator<T>, Readiness<T> {
  private inner: AsyncIterator<T> | undefined;
  /** Until the inner stream is there: dropped then, with `open` (nothing of the opening stays with the stream). */
  private opening: Promise<AsyncIterator<T>> | undefined;
  private finished = false;

  constructor(private open: (() => Promise<AsyncIterable<T>> | AsyncIterable<T>) | undefined) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  whenReady(cb: () => void): void {
    if (this.inner) whenReady(this.inner, cb);
    else cb();
  }

  takeNow(): IteratorResult<T> | undefined {
    return this.inner ? takeNow<T>(this.inner) : undefined;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.inner) return this.inner.next();
    if (this.finished) return Promise.resolve(DONE);
    return this.start().then(
      (i) => (this.finished ? DONE : i.next()),
      (e: unknown) => {
        this.finished = true;
        throw e;
      },
    );
  }

  return(value?: unknown): Promise<IteratorResult<T>> {
    const inner = this.inner;
    if (inner) return inner.return ? inner.return(value) : Promise.resolve(DONE);
    this.finished = true;
    if (!this.opening) return Promise.resolve(DONE);
    // Being opened: the inner stream, once there, is ended too.
    return this.opening.then(
      (i) => (i.return ? i.return(value) : DONE),
      () => DONE,
    );
  }

  private start(): Promise<AsyncIterator<T>> {
    const open = this.open;
    if (!open) return this.opening ?? Promise.reject(new Error("deferred stream: opened twice"));
    this.open = undefined;
    this.opening = Promise.resolve()
      .then(open)
      .then((s) => {
        this.inner = s[Symbol.asyncIterator]();
        this.opening = undefined;
        return this.inner;
      });
    return this.opening;
  }
}

/** What a mapped stream does at its end. */
export interface MapEnds {
  /** The source ended: may throw, the stream then fails with it (an expired token's stream). */
  done?(): void;
  /** The stream ended however (done, failed, returned by its reader): once. */
  finally?(): void;
}

/** What maps a stream's items (`mapStream`): an object, so that a stream's mapping and its ends can be one instance. */
export interface StreamMapper<T, U> extends MapEnds {
  map(item: T): U | Promise<U>;
}

/**
 * Each item of `source` through `mapper.map` (a value or a promise of one), one reaction per item: what a
 * `for await … yield f(x)` generator does, without the generator. `map` failing fails the stream and ends the source.
 */
export function mapStream<T, U>(source: AsyncIterable<T>, mapper: StreamMapper<T, U>): AsyncIterableIterator<U> {
  return new Mapped(source[Symbol.asyncIterator](), mapper);
}

class Mapped<T, U> implements AsyncIterableIterator<U>, Readiness<U> {
  private ended = false;
  /** An item taken at once whose mapping is a promise: the next `next` answers it. */
  private mapping: Promise<IteratorResult<U>> | undefined;

  constructor(
    private readonly it: AsyncIterator<T>,
    private readonly m: StreamMapper<T, U>,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<U> {
    return this;
  }

  whenReady(cb: () => void): void {
    if (this.mapping) void this.mapping.then(cb, cb);
    else if (this.ended) cb();
    else whenReady(this.it, cb);
  }

  takeNow(): IteratorResult<U> | undefined {
    if (this.ended) return DONE;
    if (this.mapping) return undefined;
    const r = takeNow<T>(this.it);
    if (!r) return undefined;
    const out = this.take(r);
    if (!(out instanceof Promise)) return out;
    this.mapping = out;
    return undefined;
  }

  next(): Promise<IteratorResult<U>> {
    const m = this.mapping;
    if (m) {
      this.mapping = undefined;
      return m;
    }
    return this.ended
      ? Promise.resolve(DONE)
      : this.it.next().then(
          (r) => this.take(r),
          (e: unknown) => this.fail(e),
        );
  }

  return(value?: unknown): Promise<IteratorResult<U>> {
    this.end();
    return this.it.return ? this.it.return(value).then(() => DONE) : Promise.resolve(DONE);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.m.finally?.();
  }

  private fail(e: unknown): never {
    this.end();
    throw e;
  }

  private take(r: IteratorResult<T>): IteratorResult<U> | Promise<IteratorResult<U>> {
    if (r.done) {
      try {
        this.m.done?.();
      } catch (e) {
        return this.fail(e);
      }
      this.end();
      return DONE;
    }
    let v: U | Promise<U>;
    try {
      v = this.m.map(r.value);
    } catch (e) {
      return this.closeAndFail(e);
    }
    if (!(v instanceof Promise)) return { done: false, value: v };
    return v.then(
      (value) => ({ done: false, value }),
      (e: unknown) => this.closeAndFail(e),
    );
  }

  /** As `for await` does on a throw in its body: the source is ended (not waited for) and the error passed on. */
  private closeAndFail(e: unknown): never {
    void this.it.return?.()?.catch(() => undefined);
    return this.fail(e);
  }
}

/** When a batched stream's next batch is there without waiting (see `batches`). */
export interface BatchesNow<T> {
  /** When the next `fill` is worth running (Readiness.whenReady). */
  ready(cb: () => void): void;
  /** The next batch if it is there without waiting (undefined: ended); LATER when `fill` must wait or read. */
  fillNow(): readonly T[] | undefined | typeof LATER;
}

/** What a batched stream reads (see `batches`): one object, so that a stream's source can be one class instance. */
export interface BatchSource<T> extends Partial<BatchesNow<T>> {
  /** The next batch (empty: ask again; undefined: the stream ended). */
  fill(): Promise<readonly T[] | undefined>;
  /** Runs once the stream ended, however, and never while a `fill` is running (it runs when that one settles). */
  close(): void;
}

/**
 * A stream read in batches: `fill` gives the next one (empty: ask again; undefined: the stream ended). An item of a
 * batch costs a resolved promise, a batch one step: no generator waits between them. `close` runs once the stream
 * ended, however, and never while a `fill` is running (it runs when that one settles).
 */
export function batches<T>(
  fill: () => Promise<readonly T[] | undefined>,
  close: () => void,
  now?: BatchesNow<T>,
): AsyncIterableIterator<T> {
  return new Batches({ fill, close, ready: now?.ready, fillNow: now?.fillNow });
}

/** `batches` of a source object (its push path when it has `ready` and `fillNow`). */
export function batchesOf<T>(source: BatchSource<T>): AsyncIterableIterator<T> {
  return new Batches(source);
}

class Batches<T> implements AsyncIterableIterator<T>, Readiness<T> {
  private batch: readonly T[] = [];
  private i = 0;
  private ended = false;
  private filling = false;
  /** A `next` waits on the push path's callback (`now.ready`) after an empty batch, holding no read of the source. */
  private waiting = false;
  private closed = false;

  /** Its push path, when the source has one. */
  private readonly now: BatchesNow<T> | undefined;

  constructor(private readonly source: BatchSource<T>) {
    this.now = source.ready && source.fillNow ? (source as BatchesNow<T>) : undefined;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  whenReady(cb: () => void): void {
    if (this.ended || this.filling || this.waiting || this.i < this.batch.length || !this.now) cb();
    else this.now.ready(cb);
  }

  takeNow(): IteratorResult<T> | undefined {
    if (this.ended) return DONE;
    if (this.filling || this.waiting) return undefined;
    if (this.i < this.batch.length) return { done: false, value: this.batch[this.i++]! };
    if (!this.now) return undefined;
    for (;;) {
      let b: readonly T[] | undefined | typeof LATER;
      try {
        b = this.now.fillNow();
      } catch (e) {
        this.end();
        throw e;
      }
      if (b === LATER) return undefined;
      if (!b) {
        this.end();
        return DONE;
      }
      this.batch = b;
      this.i = 0;
      if (this.i < b.length) return { done: false, value: b[this.i++]! };
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.ended) return Promise.resolve(DONE);
    if (this.i < this.batch.length) return Promise.resolve({ done: false, value: this.batch[this.i++]! });
    return this.step();
  }

  return(): Promise<IteratorResult<T>> {
    this.end();
    return Promise.resolve(DONE);
  }

  private shut(): void {
    if (this.closed) return;
    this.closed = true;
    this.batch = [];
    this.source.close();
  }

  private end(): void {
    this.ended = true;
    if (!this.filling) this.shut();
  }

  /**
   * After an empty batch (a catch-up that found nothing: the stream is live now), the next item by the push path's
   * callback and its `fill` at once, rather than by a `fill` held pending (and the source's read under it) while the
   * stream is idle; `fill` again only when the push path cannot hand it.
   */
  private wait(now: BatchesNow<T>): Promise<IteratorResult<T>> {
    this.waiting = true;
    return new Promise<void>((r) => now.ready(r)).then(() => {
      this.waiting = false;
      if (this.ended) {
        this.shut();
        return DONE;
      }
      return this.takeNow() ?? this.step();
    });
  }

  private step(): Promise<IteratorResult<T>> {
    this.filling = true;
    return this.source.fill().then(
      (b): IteratorResult<T> | Promise<IteratorResult<T>> => {
        this.filling = false;
        if (this.ended || !b) {
          this.end();
          return DONE;
        }
        this.batch = b;
        this.i = 0;
        if (this.i < b.length) return { done: false, value: b[this.i++]! };
        return this.now ? this.wait(this.now) : this.step();
      },
      (e: unknown) => {
        this.filling = false;
        this.end();
        throw e;
      },
    );
  }
}
