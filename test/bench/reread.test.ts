import { describe, expect, it } from "vitest";
import { frameMix, lruHitRatios, rereadProfile } from "../../bench/lib/reread.js";

// The frame re-read profile is what a page cache will be sized from: its arithmetic has to be right.
describe("frame re-read profile", () => {
  it("an LRU smaller than a cycle of distinct pages serves none of it; one as large serves all", () => {
    const keys = ["a", "b", "c"];
    expect(lruHitRatios(keys, [2, 3])).toEqual({ 2: 0, 3: 1 });
  });

  it("counts a re-read by how many other pages came between", () => {
    // a b a c, repeated: each read of "a" comes after one other page (an LRU of 2 keeps it), b and c after two.
    const r = lruHitRatios(["a", "b", "a", "c"], [1, 2, 3, 4]);
    expect(r).toEqual({ 1: 0, 2: 0.5, 3: 1, 4: 1 });
  });

  it("models the frame: each new page, one re-opened frame's newest page and its tail polls", () => {
    const frames = [
      { conversationId: "c1", accessToken: "t1", messages: 30 },
      { conversationId: "c2", accessToken: "t2", messages: 130 },
    ];
    const pages = frameMix(frames, (i) => ({ conversationId: "long", accessToken: "tl", offset: i * 100 }), {
      newPages: 4,
      pollsPerOpen: 2,
    });
    expect(pages.map((p) => p.key)).toEqual([
      "long:0:100",
      "c1:0:100",
      "c1:30:100",
      "c1:30:100",
      "long:100:100",
      "c2:0:100",
      "c2:100:100",
      "c2:100:100",
      "long:200:100",
      "c1:0:100",
      "c1:30:100",
      "c1:30:100",
      "long:300:100",
      "c2:0:100",
      "c2:100:100",
      "c2:100:100",
    ]);
    const p = rereadProfile(pages, [64]);
    expect(p.distinct_pages).toBe(8);
    expect(p.reread_share).toBe(0.5);
    expect(p.lru_hit_ratio_by_entries[64]).toBe(1);
  });
});
