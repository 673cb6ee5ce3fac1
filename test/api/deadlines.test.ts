import { describe, expect, test } from "vitest";
import { Deadlines } from "../../src/protocol/deadlines.js";
import { WatchLimits } from "../../src/protocol/watch-limits.js";
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

  test("a held object fires once; dropped, it never fires; held twice at once it is held once", async () => {
    const d = new Deadlines(20);
    const fired: string[] = [];
    const a = { expire: () => fired.push("a") };
    const b = { expire: () => fired.push("b") };
    const c = { expire: () => fired.push("c") };
    const at = d.hold(40, a);
    expect(d.hold(40, a)).toBe(at);
    const bAt = d.hold(40, b);
    d.hold(40, c);
    expect(d.pending).toBe(3);
    d.drop(b, bAt);
    d.drop(b, bAt);
    expect(d.pending).toBe(2);
    await waitFor("the held deadlines fired", () => fired.length === 2);
    expect(fired.sort()).toEqual(["a", "c"]);
    // Dropping after it fired takes nothing back, and no timer is left.
    d.drop(a, at);
    expect(d.pending).toBe(0);
    expect(d.timers).toBe(0);
  });
});

describe("WatchLimits", () => {
  const caps = {
    perInstance: 10,
    framesPerInstance: 6,
    perAccount: 5,
    framesPerAccount: 4,
    perAddress: 8,
    perCustomer: 3,
    perToken: 2,
  };
  const frame = (token: string, customer = "bot u1") =>
    ({ kind: "frame", token, account: "acc", address: "10.0.0.1", customer }) as const;

  test("the streams of one holder share its counts; released, every key is gone; a refusal leaves none behind", () => {
    const l = new WatchLimits(caps);
    const h1 = l.admit(frame("t1"));
    const h2 = l.admit(frame("t1"));
    // Token, customer, the frames' account share, the frames' address share: four keys for two streams.
    expect(l.keys).toBe(4);
    expect(() => l.admit(frame("t1"))).toThrow(/at most 2 watch streams may be open with one token/);
    const h3 = l.admit(frame("t2"));
    expect(() => l.admit(frame("t3"))).toThrow(/at most 3 watch streams may be open for one customer/);
    // The refused third token left no key of its own.
    expect(l.keys).toBe(5);
    expect(l.open).toBe(3);
    h1.release();
    h1.release();
    expect(l.open).toBe(2);
    h2.release();
    h3.release();
    expect(l.open).toBe(0);
    expect(l.openFrames).toBe(0);
    expect(l.keys).toBe(0);
    // The frames' share of the account is 4, and the team's is its own.
    const frames = [l.admit(frame("a", "bot u1")), l.admit(frame("b", "bot u2")), l.admit(frame("c", "bot u3"))];
    frames.push(l.admit(frame("d", "bot u4")));
    expect(() => l.admit(frame("e", "bot u5"))).toThrow(/this account's frames have 4 watch streams open/);
    const team = l.admit({ kind: "team", token: "s", account: "acc", address: "10.0.0.1", customer: "" });
    expect(l.open).toBe(5);
    team.release();
    for (const f of frames) f.release();
    expect(l.keys).toBe(0);
  });
});
