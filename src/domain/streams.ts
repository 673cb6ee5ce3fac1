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
  let inner: AsyncIterator<T> | undefined;
  let opening: Promise<AsyncIterator<T>> | undefined;
  let finished = false;
  const start = () =>
    (opening ??= Promise.resolve()
      .then(open)
      .then((s) => (inner = s[Symbol.asyncIterator]())));
  const self: AsyncIterableIterator<T> & Readiness<T> = {
    [Symbol.asyncIterator]: () => self,
    whenReady: (cb) => (inner ? whenReady(inner, cb) : cb()),
    takeNow: () => (inner ? takeNow<T>(inner) : undefined),
    next(): Promise<IteratorResult<T>> {
      if (inner) return inner.next();
      if (finished) return Promise.resolve(DONE);
      return start().then(
        (i) => (finished ? DONE : i.next()),
        (e: unknown) => {
          finished = true;
          throw e;
        },
      );
    },
    return(value?: unknown): Promise<IteratorResult<T>> {
      if (inner) return inner.return ? inner.return(value) : Promise.resolve(DONE);
      finished = true;
      if (!opening) return Promise.resolve(DONE);
      // Being opened: the inner stream, once there, is ended too.
      return opening.then(
        (i) => (i.return ? i.return(value) : DONE),
        () => DONE,
      );
    },
  };
  return self;
}

/** What a mapped stream does at its end. */
export interface MapEnds {
  /** The source ended: may throw, the stream then fails with it (an expired token's stream). */
  done?(): void;
  /** The stream ended however (done, failed, returned by its reader): once. */
  finally?(): void;
}

/**
 * Each item of `source` through `f` (a value or a promise of one), one reaction per item: what a `for await … yield
 * f(x)` generator does, without the generator. `f` failing fails the stream and ends the source.
 */
export function mapStream<T, U>(
  source: AsyncIterable<T>,
  f: (item: T) => U | Promise<U>,
  ends: MapEnds = {},
): AsyncIterableIterator<U> {
  const it = source[Symbol.asyncIterator]();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    ends.finally?.();
  };
  const fail = (e: unknown): never => {
    end();
    throw e;
  };
  const take = (r: IteratorResult<T>): IteratorResult<U> | Promise<IteratorResult<U>> => {
    if (r.done) {
      try {
        ends.done?.();
      } catch (e) {
        return fail(e);
      }
      end();
      return DONE;
    }
    let v: U | Promise<U>;
    try {
      v = f(r.value);
    } catch (e) {
      return closeAndFail(e);
    }
    if (!(v instanceof Promise)) return { done: false, value: v };
    return v.then((value) => ({ done: false, value }), closeAndFail);
  };
  // As `for await` does on a throw in its body: the source is ended (not waited for) and the error passed on.
  const closeAndFail = (e: unknown): never => {
    void it.return?.()?.catch(() => undefined);
    return fail(e);
  };
  // An item taken at once whose mapping is a promise: the next `next` answers it.
  let mapping: Promise<IteratorResult<U>> | undefined;
  const self: AsyncIterableIterator<U> & Readiness<U> = {
    [Symbol.asyncIterator]: () => self,
    whenReady: (cb) => {
      if (mapping) void mapping.then(cb, cb);
      else if (ended) cb();
      else whenReady(it, cb);
    },
    takeNow(): IteratorResult<U> | undefined {
      if (ended) return DONE;
      if (mapping) return undefined;
      const r = takeNow<T>(it);
      if (!r) return undefined;
      const out = take(r);
      if (!(out instanceof Promise)) return out;
      mapping = out;
      return undefined;
    },
    next(): Promise<IteratorResult<U>> {
      const m = mapping;
      if (m) {
        mapping = undefined;
        return m;
      }
      return ended ? Promise.resolve(DONE) : it.next().then(take, fail);
    },
    return(value?: unknown): Promise<IteratorResult<U>> {
      end();
      return it.return ? it.return(value).then(() => DONE) : Promise.resolve(DONE);
    },
  };
  return self;
}

/**
 * A stream read in batches: `fill` gives the next one (empty: ask again; undefined: the stream ended). An item of a
 * batch costs a resolved promise, a batch one step: no generator waits between them. `close` runs once the stream
 * ended, however, and never while a `fill` is running (it runs when that one settles).
 */
export function batches<T>(
  fill: () => Promise<readonly T[] | undefined>,
  close: () => void,
  now?: {
    /** When the next `fill` is worth running (Readiness.whenReady). */
    ready(cb: () => void): void;
    /** The next batch if it is there without waiting (undefined: ended); LATER when `fill` must wait or read. */
    fill(): readonly T[] | undefined | typeof LATER;
  },
): AsyncIterableIterator<T> {
  let batch: readonly T[] = [];
  let i = 0;
  let ended = false;
  let filling = false;
  let closed = false;
  const shut = () => {
    if (closed) return;
    closed = true;
    batch = [];
    close();
  };
  const end = () => {
    ended = true;
    if (!filling) shut();
  };
  const step = (): Promise<IteratorResult<T>> => {
    filling = true;
    return fill().then(
      (b): IteratorResult<T> | Promise<IteratorResult<T>> => {
        filling = false;
        if (ended || !b) {
          end();
          return DONE;
        }
        batch = b;
        i = 0;
        return i < b.length ? { done: false, value: b[i++]! } : step();
      },
      (e: unknown) => {
        filling = false;
        end();
        throw e;
      },
    );
  };
  const self: AsyncIterableIterator<T> & Readiness<T> = {
    [Symbol.asyncIterator]: () => self,
    whenReady: (cb) => (ended || filling || i < batch.length || !now ? cb() : now.ready(cb)),
    takeNow(): IteratorResult<T> | undefined {
      if (ended) return DONE;
      if (filling) return undefined;
      if (i < batch.length) return { done: false, value: batch[i++]! };
      if (!now) return undefined;
      for (;;) {
        let b: readonly T[] | undefined | typeof LATER;
        try {
          b = now.fill();
        } catch (e) {
          end();
          throw e;
        }
        if (b === LATER) return undefined;
        if (!b) {
          end();
          return DONE;
        }
        batch = b;
        i = 0;
        if (i < b.length) return { done: false, value: b[i++]! };
      }
    },
    next: () =>
      ended ? Promise.resolve(DONE) : i < batch.length ? Promise.resolve({ done: false, value: batch[i++]! }) : step(),
    return(): Promise<IteratorResult<T>> {
      end();
      return Promise.resolve(DONE);
    },
  };
  return self;
}
