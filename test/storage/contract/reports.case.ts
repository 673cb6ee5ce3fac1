import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import { account, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** The report's rows: one chatbot's conversations started in [from, to), and their messages per quarter hour. */
export function reportCases(h: () => Harness) {
  describe("report rows", () => {
    it("reads the period's conversations with their first messages and rating, and counts their messages", async () => {
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
      await message(store, other, elsewhere, { at: 1_500, start: true, userId: "u3" });
      await store.conversations.setStatus(x, "closed", 907_000);
      await store.ratings.set({ conversationId: x, accountId: a.accountId, score: 3, comment: "", ratedAt: 908_000 });

      const rows = await store.reports.conversations(a.chatbotId, 1_000, 3_000);
      const sorted = [...rows].sort((p, q) => p.createdAt - q.createdAt);
      expect(sorted).toEqual([
        {
          createdAt: sorted[0]!.createdAt,
          lastActivityAt: 906_000,
          status: "closed",
          firstCustomerAt: 1_000,
          firstOperatorAt: 905_000,
          score: 3,
        },
        {
          createdAt: sorted[1]!.createdAt,
          lastActivityAt: 2_000,
          status: "live",
          firstCustomerAt: 2_000,
          firstOperatorAt: null,
          score: null,
        },
      ]);
      const quarters = await store.reports.messageQuarters(a.chatbotId, 1_000, 3_000);
      expect([...quarters].sort((p, q) => p.quarter - q.quarter)).toEqual([
        { quarter: 0, messages: 3 },
        { quarter: 1, messages: 2 },
      ]);
      expect(await store.reports.conversations(a.chatbotId, 3_000, 4_000)).toEqual([]);
    });
  });
}
