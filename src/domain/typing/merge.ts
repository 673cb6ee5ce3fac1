/** Signals waiting to be sent on one stream; more than this and the oldest are dropped (they are only hints). */
const MAX_WAITING = 32;

/**
 * A stream's events with pushed signals in between. `subscribe` is called only once the source has yielded its
 * first event, that is once the source has checked the caller may read it, so no signal reaches a caller the
 * stream would have refused.
 */
export async function* withSignals<T, S>(
  source: AsyncIterable<T>,
  subscribe: (push: (s: S) => void) => () => void,
  toEvent: (s: S) => T | undefined,
): AsyncGenerator<T> {
  const waiting: S[] = [];
  let wake: (() => void) | undefined;
  let stop: (() => void) | undefined;
  const it = source[Symbol.asyncIterator]();
  let next: Promise<IteratorResult<T>> | undefined;
  // What the pending read gave, once it settled. The read and the signals wake the same waiter: no race against the
  // read, which would leave a reaction on it for every signal that came first.
  let settled: { r: IteratorResult<T> } | { e: unknown } | undefined;
  try {
    for (;;) {
      if (!next) {
        const read = it.next();
        next = read;
        read.then(
          (r) => {
            if (next === read) settled = { r };
            wake?.();
          },
          (e: unknown) => {
            if (next === read) settled = { e };
            wake?.();
          },
        );
      }
      if (waiting.length === 0 && !settled) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (waiting.length > 0) {
        for (const s of waiting.splice(0)) {
          const e = toEvent(s);
          if (e !== undefined) yield e;
        }
        continue;
      }
      const got = settled;
      if (!got) continue;
      settled = undefined;
      if ("e" in got) throw got.e;
      const r = got.r;
      next = undefined;
      if (r.done) return;
      yield r.value;
      stop ??= subscribe((s) => {
        if (waiting.push(s) > MAX_WAITING) waiting.shift();
        wake?.();
      });
    }
  } finally {
    stop?.();
    // With a read pending, the return is queued behind it (the stream's abort signal ends that read).
    if (next) void it.return?.(undefined).catch(() => undefined);
    else await it.return?.(undefined);
  }
}
