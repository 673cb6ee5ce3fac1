import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { unauthenticated } from "../../src/domain/errors.js";
import { withSignals } from "../../src/domain/typing/merge.js";
import { StreamGuard } from "../../src/protocol/stream-guard.js";

// What an open stream keeps must not grow with the events it has delivered: 20,000 streams stay open for hours. A
// wait raced against a promise of the stream's whole life left a reaction on it per event (about 300 bytes, kept
// until the stream ended: 30 MB over a 100,000-event catch-up).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const N = 100_000;
/** Far above what the stream itself holds, far below N × 300 bytes (30 MB) of reactions. */
const MAX_GROWTH = 10 * 1024 * 1024;

const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** Items 1..n at once, then nothing until the signal aborts. */
async function* items(n: number, signal: AbortSignal): AsyncGenerator<number> {
  for (let i = 1; i <= n; i++) yield i;
  await new Promise<void>((r) => signal.addEventListener("abort", () => r(), { once: true }));
}

const guards: StreamGuard[] = [];
afterEach(() => {
  for (const g of guards.splice(0)) g.close();
});

describe("an open stream's memory does not grow with what it delivered", () => {
  it("the credential guard: 100,000 events through one stream, which then still ends at once when revoked", async () => {
    let revoked = false;
    const guard = new StreamGuard(
      {
        // One change, always: every read names the stream's subject, so it is checked again.
        since: async () => (revoked ? [{ seq: 1, subject: "s" } as never] : []),
        last: async () => 0,
        prune: async () => 0,
      },
      { sweepMs: 60_000, recheckAllMs: 3_600_000 },
    );
    guards.push(guard);
    const client = new AbortController();
    const stream = guard.run(
      "k",
      { subjects: ["s"], expiresAt: Date.now() + 3_600_000, timeBound: false, generation: guard.generation },
      async () => {
        if (revoked) throw unauthenticated("revoked");
      },
      client.signal,
      (signal) => items(N, signal),
    );
    let got = 0;
    let before = 0;
    for (;;) {
      const r = await stream.next();
      if (r.done) throw new Error("ended early");
      got++;
      if (got === 1) before = heap();
      if (got === N) break;
    }
    // Open and waiting for its next event: what it kept of the 100,000 is measured now.
    const pending = stream.next();
    const growth = heap() - before;
    expect(growth).toBeLessThan(MAX_GROWTH);
    // The wait still ends with the credential's verdict.
    revoked = true;
    await guard.told();
    await expect(pending).rejects.toThrow("revoked");
  });

  it("the typing merger: 100,000 signals while the stream's read stays pending", async () => {
    let push: ((s: number) => void) | undefined;
    const source = (async function* () {
      yield "first";
      await new Promise(() => undefined);
    })();
    const merged = withSignals<string, number>(source, {
      subscribe: (p) => {
        push = p;
        return () => undefined;
      },
      toEvent: (s) => `signal ${s}`,
    });
    expect((await merged.next()).value).toBe("first");
    const nextOf = () => merged.next().then((r) => r.value);
    // The first signal subscribes: the merger asks for the next event, then pending.
    const first = nextOf();
    await new Promise((r) => setImmediate(r));
    push!(0);
    expect(await first).toBe("signal 0");
    const before = heap();
    for (let i = 1; i <= N; i++) {
      const v = nextOf();
      push!(i);
      expect(await v).toBe(`signal ${i}`);
    }
    expect(heap() - before).toBeLessThan(MAX_GROWTH);
  });
});
