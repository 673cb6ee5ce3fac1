import { describe, expect, test } from "vitest";
import { Deadlines } from "../../src/protocol/deadlines.js";
import { waitFor } from "../helpers/time-scale.js";

// The watch streams' tokens' expiry on one timer (src/protocol/deadlines.ts): never early, at most one bucket late,
// cancellable, and one timer however many deadlines wait.

describe("Deadlines", () => {
  test("many deadlines, one timer; each fires once, never before its time; a cancelled one never fires", async () => {
    const d = new Deadlines(50);
    const start = Date.now();
    const fired: { i: number; at: number }[] = [];
    const cancels = Array.from({ length: 200 }, (_, i) =>
      d.after(100 + (i % 5) * 40, () => fired.push({ i, at: Date.now() })),
    );
    expect(d.pending).toBe(200);
    expect(d.timers).toBe(1);
    for (let i = 0; i < 200; i += 10) cancels[i]!();
    expect(d.pending).toBe(180);
    await waitFor("every deadline not cancelled fired", () => fired.length === 180);
    expect(new Set(fired.map((f) => f.i)).size).toBe(180);
    expect(fired.some((f) => f.i % 10 === 0)).toBe(false);
    for (const f of fired) expect(f.at - start).toBeGreaterThanOrEqual(100 + (f.i % 5) * 40);
    expect(d.pending).toBe(0);
    expect(d.timers).toBe(0);
    // Cancelling after it fired changes nothing.
    cancels[1]!();
    expect(d.pending).toBe(0);
  });

  test("an earlier deadline re-arms the one timer; the last cancelled stops it", async () => {
    const d = new Deadlines(20);
    const late = d.after(60_000, () => undefined);
    let early = false;
    d.after(30, () => {
      early = true;
    });
    expect(d.timers).toBe(1);
    await waitFor("the earlier deadline fired", () => early);
    expect(d.pending).toBe(1);
    expect(d.timers).toBe(1);
    late();
    expect(d.timers).toBe(0);
  });
});
