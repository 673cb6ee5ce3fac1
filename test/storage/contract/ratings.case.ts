import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { Harness } from "./harness.js";

/** Customers' ratings: one per conversation, replaced by a later one, read for a page of conversations at once. */
export function ratingCases(h: () => Harness) {
  describe("conversation ratings", () => {
    it("keeps the latest rating of each conversation and reads only those asked for", async () => {
      const { store } = h();
      const [x, y, z] = [newId(), newId(), newId()];
      const accountId = newId();
      expect((await store.ratings.forConversations([x, y])).size).toBe(0);
      await store.ratings.set({ conversationId: x, accountId, score: 2, comment: "slow", ratedAt: 10 });
      await store.ratings.set({ conversationId: y, accountId, score: 5, comment: "", ratedAt: 11 });
      await store.ratings.set({ conversationId: x, accountId, score: 4, comment: "fine after all", ratedAt: 12 });
      const got = await store.ratings.forConversations([x, z]);
      expect([...got.entries()]).toEqual([[x, { score: 4, comment: "fine after all", ratedAt: 12 }]]);
      expect((await store.ratings.forConversations([])).size).toBe(0);
    });
  });
}
