import { type Readiness, takeNow, whenReady } from "../domain/streams.js";
import type { AnyHandler } from "./call.js";

/** Resolves once every write made so far is on disk; undefined when none is waiting. */
export type DurabilityBarrier = () => Promise<void> | undefined;

/**
 * Handlers whose answers (results, errors, each streamed item) leave only after the writes they may have seen
 * are durable: with group commit the storage acknowledges commits before their fsync, so the wait moves here,
 * where many requests share one fsync instead of each blocking the event loop for its own.
 */
export function durableHandlers(
  handlers: Record<string, AnyHandler>,
  barrier: DurabilityBarrier,
): Record<string, AnyHandler> {
  const out: Record<string, AnyHandler> = {};
  for (const [name, h] of Object.entries(handlers)) {
    out[name] = ((req: never, call) => {
      const result = h(req, call);
      return Symbol.asyncIterator in (result as object)
        ? durableStream(result as AsyncIterable<unknown>, barrier)
        : durableResult(result as Promise<unknown>, barrier);
    }) as AnyHandler;
  }
  return out;
}

/**
 * The result once the writes it may have seen are durable: one reaction on the handler's promise, not an async
 * function awaiting it (a promise and a turn of the microtask queue fewer on every call).
 */
function durableResult(result: Promise<unknown>, barrier: DurabilityBarrier): Promise<unknown> {
  return result.then(
    (value) => {
      const wait = barrier();
      return wait ? wait.then(() => value) : value;
    },
    (e: unknown) => {
      // An error may follow a write ("your message was saved"): it too waits for the disk.
      const wait = barrier();
      if (!wait) throw e;
      return wait.then(
        () => Promise.reject(e),
        () => Promise.reject(e),
      );
    },
  );
}

/**
 * Each item once the writes it may have seen are on disk. Not a generator: one reaction per item, and none at all
 * while the stream waits for its next item beyond the inner stream's own (domain/streams.ts). A class, not an object of
 * closures: an idle stream keeps it for its whole life.
 */
function durableStream(items: AsyncIterable<unknown>, barrier: DurabilityBarrier): AsyncIterableIterator<unknown> {
  return new DurableStream(items[Symbol.asyncIterator](), barrier);
}

/** An item taken at once (the push path) while writes it may have seen are not on disk yet: held until they are. */
interface Held {
  r: IteratorResult<unknown>;
  p: Promise<unknown>;
  over: boolean;
  e?: unknown;
  cb?: () => void;
}

class DurableStream implements AsyncIterableIterator<unknown>, Readiness {
  private held: Held | undefined;

  constructor(
    private readonly it: AsyncIterator<unknown>,
    private readonly barrier: DurabilityBarrier,
  ) {}

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this;
  }

  whenReady(cb: () => void): void {
    const held = this.held;
    if (!held) whenReady(this.it, cb);
    else if (held.over) cb();
    else held.cb = cb;
  }

  takeNow(): IteratorResult<unknown> | undefined {
    const held = this.held;
    if (held) {
      if (!held.over) return undefined;
      this.held = undefined;
      if ("e" in held) throw held.e;
      return held.r;
    }
    const r = takeNow(this.it);
    if (!r || r.done) return r;
    const wait = this.barrier();
    if (!wait) return r;
    this.hold(r, wait);
    return undefined;
  }

  next(): Promise<IteratorResult<unknown>> {
    const h = this.held;
    if (!h)
      return this.it.next().then(
        (r) => this.item(r),
        (e: unknown) => this.failure(e),
      );
    this.held = undefined;
    return h.p.then(() => {
      if ("e" in h) throw h.e;
      return h.r;
    });
  }

  return(value?: unknown): Promise<IteratorResult<unknown>> {
    return this.it.return ? this.it.return(value) : Promise.resolve({ done: true, value });
  }

  private item(r: IteratorResult<unknown>): IteratorResult<unknown> | Promise<IteratorResult<unknown>> {
    if (r.done) return r;
    const wait = this.barrier();
    return wait ? wait.then(() => r) : r;
  }

  /** An error may follow a write ("your message was saved"): it too waits for the disk. */
  private failure(e: unknown): Promise<never> {
    const wait = this.barrier();
    if (!wait) throw e;
    return wait.then(
      () => Promise.reject(e),
      () => Promise.reject(e),
    );
  }

  private hold(r: IteratorResult<unknown>, wait: Promise<void>): void {
    const h: Held = { r, p: Promise.resolve(), over: false };
    const over = (e?: unknown) => {
      h.over = true;
      if (e !== undefined) h.e = e;
      h.cb?.();
    };
    h.p = wait.then(
      () => over(),
      (e: unknown) => over(e ?? new Error("durability wait failed")),
    );
    this.held = h;
  }
}
