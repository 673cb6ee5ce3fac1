import { afterEach, describe, expect, it } from "vitest";
import { unauthenticated } from "../../src/domain/errors.js";
import { DONE, type Readiness, takeNow, whenReady } from "../../src/domain/streams.js";
import { StreamGuard } from "../../src/protocol/stream-guard.js";

// A caught-up stream's events take the push path (domain/streams.ts): the source says when it has something and hands
// it at once, so no `next` stays pending through every layer while the stream waits. What the guard promises holds on
// it: no event is handed before a read of the change log that started after it arrived, and a revocation ends the
// stream at once, with the event written after it not delivered.

/** A source that hands its events at once (Readiness) and counts the reads that had to wait (`next`). */
class PushSource implements AsyncIterableIterator<number>, Readiness<number> {
  readonly queue: number[] = [];
  nexts = 0;
  private ready: (() => void) | undefined;
  private ended = false;

  constructor(signal: AbortSignal) {
    signal.addEventListener("abort", () => this.end(), { once: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  push(n: number): void {
    this.queue.push(n);
    this.fire();
  }

  end(): void {
    this.ended = true;
    this.fire();
  }

  whenReady(cb: () => void): void {
    this.ready = cb;
    if (this.queue.length > 0 || this.ended) this.fire();
  }

  takeNow(): IteratorResult<number> | undefined {
    if (this.queue.length > 0) return { done: false, value: this.queue.shift()! };
    return this.ended ? DONE : undefined;
  }

  async next(): Promise<IteratorResult<number>> {
    this.nexts++;
    for (;;) {
      const r = this.takeNow();
      if (r) return r;
      await new Promise<void>((w) => whenReady(this, w));
    }
  }

  private fire(): void {
    const r = this.ready;
    this.ready = undefined;
    r?.();
  }
}

/** Reads `it` as the JSON routes' transport does: what it hands at once, else once it says it is ready. */
async function take(it: AsyncIterator<number>): Promise<IteratorResult<number>> {
  let r = takeNow<number>(it);
  for (let i = 0; i < 2 && !r; i++) {
    await new Promise<void>((w) => whenReady(it, w));
    r = takeNow<number>(it);
  }
  return r ?? it.next();
}

const guards: StreamGuard[] = [];
afterEach(() => {
  for (const g of guards.splice(0)) g.close();
});

function guarded() {
  const state = { revoked: false, reads: 0 };
  const guard = new StreamGuard(
    {
      since: async () => {
        state.reads++;
        return state.revoked ? [{ seq: 1, subject: "s" } as never] : [];
      },
      last: async () => 0,
      prune: async () => 0,
    },
    { sweepMs: 60_000, recheckAllMs: 3_600_000 },
  );
  guards.push(guard);
  let source!: PushSource;
  const stream = guard.run(
    "k",
    { subjects: ["s"], expiresAt: Date.now() + 3_600_000, timeBound: false, generation: guard.generation },
    async () => {
      if (state.revoked) throw unauthenticated("revoked");
    },
    new AbortController().signal,
    (signal) => (source = new PushSource(signal)),
  );
  return { state, stream, source: () => source };
}

describe("a caught-up stream's events are pushed through the credential guard", () => {
  it("1,000 events, each once and in order, with no read of the source left waiting", async () => {
    const { state, stream, source } = guarded();
    // The first event opens the stream (the pull path, as a resumed stream's state does).
    const first = stream.next();
    source().push(0);
    expect(await first).toEqual({ done: false, value: 0 });
    const nexts = source().nexts;
    for (let i = 1; i <= 1000; i++) {
      const pending = take(stream);
      // Waiting now: the event arrives after the reader asked (the conversation's next event).
      await new Promise((r) => setImmediate(r));
      const readsBefore = state.reads;
      source().push(i);
      expect(await pending).toEqual({ done: false, value: i });
      // Cleared by a read of the change log that started after it arrived.
      expect(state.reads).toBeGreaterThan(readsBefore);
    }
    expect(source().nexts).toBe(nexts);
  });

  it("revoked while it waits: it ends at once with the verdict; the event written after is not delivered", async () => {
    const { state, stream, source } = guarded();
    const first = stream.next();
    source().push(0);
    await first;
    const pending = take(stream);
    await new Promise((r) => setImmediate(r));
    // The revocation commits, then an event is written: the read that clears the event sees the revocation.
    state.revoked = true;
    source().push(1);
    await expect(pending).rejects.toThrow("revoked");
    await expect(stream.next()).resolves.toEqual(DONE);
  });
});
