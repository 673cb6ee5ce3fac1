/**
 * Stream layers that add no async generator of their own. A watch stream's event passes every layer between the log
 * reader and the socket; an async generator layer costs several promises per event, and while the stream waits for
 * its next event (seconds, under fan-out) they stay pending, outlive the young generation and are promoted: the
 * collector's work grows with the number of open streams. These forward to the inner stream instead.
 */

/** The result of a stream that ended. */
export const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

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
  const self: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => self,
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
  const self: AsyncIterableIterator<U> = {
    [Symbol.asyncIterator]: () => self,
    next: () => (ended ? Promise.resolve(DONE) : it.next().then(take, fail)),
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
export function batches<T>(fill: () => Promise<readonly T[] | undefined>, close: () => void): AsyncIterableIterator<T> {
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
  const self: AsyncIterableIterator<T> = {
    [Symbol.asyncIterator]: () => self,
    next: () =>
      ended ? Promise.resolve(DONE) : i < batch.length ? Promise.resolve({ done: false, value: batch[i++]! }) : step(),
    return(): Promise<IteratorResult<T>> {
      end();
      return Promise.resolve(DONE);
    },
  };
  return self;
}
