import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/domain/time.js";

describe("isoTime", () => {
  it("writes exactly what Date#toISOString writes, for any instant", () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it("around the edges of its fast path and of days, months, leap years", () => {
    const edges = [
      0, -1, 1, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_399_999, 253_402_300_799_999,
      253_402_300_800_000, 1_763_720_000_123,
    ];
    for (const ms of edges) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    for (let y = 1970; y <= 2400; y += 1) {
      for (const ms of [
        Date.UTC(y, 1, 28, 23, 59, 59, 999),
        Date.UTC(y, 1, 29),
        Date.UTC(y, 2, 1),
        Date.UTC(y, 11, 31, 23, 59, 59, 999),
      ])
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it("refuses what Date refuses", () => {
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
