import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import { account, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

const byKey = <T>(rows: T[], key: (r: T) => number) => [...rows].sort((p, q) => key(p) - key(q));

/** The report's counts: one chatbot's conversations started in [from, to), from the facts the writes keep. */
export function reportCases(h: () => Harness) {
  describe("report counts", () => {
    it("counts the period's conversations, hand-overs, ratings, durations and messages per quarter hour", async () => {
      const { store } = h();
      const a = await account(store);
      const other = await account(store);
      const [x, y, before, elsewhere] = [newId(), newId(), newId(), newId()];
      await message(store, a, before, { at: 999, start: true, userId: "u0" });
      await message(store, a, x, { at: 1_000, start: true, userId: "u1" });
      await message(store, a, x, { at: 1_001, role: "assistant" });
      await message(store, a, x, { at: 905_000, role: "operator" });
      await message(store, a, x, { at: 906_000, role: "operator" });
      await message(store, a, y, { at: 2_000, start: true, userId: "u2" });
      await message(store, a, y, { at: 3_000_000, role: "operator" });
      await message(store, a, y, { at: 2_500_000 });
      // Written last with an earlier instant (two sends committed in the other order): the earliest counts.
      await message(store, a, y, { at: 2_900_000, role: "operator" });
      await message(store, other, elsewhere, { at: 1_500, start: true, userId: "u3" });
      await store.conversations.setStatus(x, "closed", 907_000);
      await store.ratings.set({ conversationId: x, accountId: a.accountId, score: 3, comment: "", ratedAt: 908_000 });
      // Rated again: the newer score replaces it.
      await store.ratings.set({ conversationId: x, accountId: a.accountId, score: 4, comment: "", ratedAt: 909_000 });

      const counts = await store.reports.counts(a.chatbotId, 1_000, 3_000, 0);
      const perQuarter = new Map<number, [number, number]>();
      for (const r of counts.starts) {
        const [n, handed] = perQuarter.get(r.quarter) ?? [0, 0];
        perQuarter.set(r.quarter, [n + r.conversations, handed + r.handedOver]);
      }
      expect([...perQuarter]).toEqual([[0, [2, 2]]]);
      expect(counts.ratings).toEqual([{ score: 4, count: 1 }]);
      expect(byKey(counts.firstResponses, (r) => r.seconds)).toEqual([
        { seconds: 904, count: 1 },
        { seconds: 2_898, count: 1 },
      ]);
      // Closed: x by the team (to its last message, not the closing); y only once idle since before its last.
      expect(counts.timesToClose).toEqual([{ seconds: 905, count: 1 }]);
      const later = await store.reports.counts(a.chatbotId, 1_000, 3_000, 3_000_001);
      expect(byKey(later.timesToClose, (r) => r.seconds)).toEqual([
        { seconds: 905, count: 1 },
        { seconds: 2_998, count: 1 },
      ]);
      expect(byKey(counts.messageQuarters, (r) => r.quarter)).toEqual([
        { quarter: 0, messages: 3 },
        { quarter: 1, messages: 2 },
        { quarter: 2, messages: 1 },
        { quarter: 3, messages: 2 },
      ]);
      expect(await store.reports.counts(a.chatbotId, 3_000, 4_000, 0)).toEqual({
        starts: [],
        ratings: [],
        firstResponses: [],
        timesToClose: [],
        messageQuarters: [],
        sla: { hits: 0, breaches: 0 },
      });
    });
  });
}
