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
  try {
    for (;;) {
      if (!next) {
        next = it.next();
        // Settled later by the race below; this keeps a rejection from going unhandled meanwhile.
        next.catch(() => undefined);
      }
      const woken = new Promise<"signal">((resolve) => {
        wake = () => resolve("signal");
      });
      const r = waiting.length > 0 ? "signal" : await Promise.race([next, woken]);
      wake = undefined;
      if (r === "signal") {
        for (const s of waiting.splice(0)) {
          const e = toEvent(s);
          if (e !== undefined) yield e;
        }
        continue;
      }
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
