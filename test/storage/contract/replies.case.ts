import { describe, expect, it } from "vitest";
import { ReplyClaimLost } from "../../../src/domain/conversation/replies.js";
import { newId } from "../../../src/domain/ids.js";
import type { Harness } from "./harness.js";

/** Reply claims: one claimant holds a message's reply at a time; a lapsed or released claim can be taken over. */
export function replyCases(h: () => Harness) {
  describe("reply claims", () => {
    it("one claim holds a message; only it renews and completes; a completed claim is never taken again", async () => {
      const { store } = h();
      const messageId = newId();
      const conversationId = newId();
      const claim = (c: string, leaseUntil: number) => ({ messageId, conversationId, claim: c, leaseUntil });
      expect(await store.replies.take(claim("a", 1000), 0)).toBe(true);
      // Held, its lease running: nobody else takes it.
      expect(await store.replies.take(claim("b", 2000), 500)).toBe(false);
      expect(await store.replies.renew(messageId, "b", 5000)).toBe(false);
      expect(await store.replies.renew(messageId, "a", 3000)).toBe(true);
      expect(await store.replies.take(claim("b", 4000), 2999)).toBe(false);
      // Lapsed: taken over, and the old holder can neither renew nor complete.
      expect(await store.replies.take(claim("b", 9000), 3000)).toBe(true);
      expect(await store.replies.renew(messageId, "a", 9999)).toBe(false);
      await expect(store.replies.complete(messageId, "a", 2)).rejects.toBeInstanceOf(ReplyClaimLost);
      await store.replies.complete(messageId, "b", 2);
      await expect(store.replies.complete(messageId, "b", 3)).rejects.toBeInstanceOf(ReplyClaimLost);
      expect(await store.replies.find(messageId)).toEqual({
        messageId,
        conversationId,
        claim: "b",
        leaseUntil: 9000,
        replyOrder: 2,
      });
      // Answered: no lapse makes it takeable, no release undoes it.
      await store.replies.release(messageId, "b");
      expect(await store.replies.take(claim("c", 99_999), 99_000)).toBe(false);
      expect((await store.replies.find(messageId))?.replyOrder).toBe(2);
      expect(await store.replies.find(newId())).toBeUndefined();
      // Pruned once its lease ended before the cut-off.
      await store.replies.prune(9000, 1000);
      expect(await store.replies.find(messageId)).toBeDefined();
      expect(await store.replies.prune(9001, 1000)).toBeGreaterThanOrEqual(1);
      expect(await store.replies.find(messageId)).toBeUndefined();
    });

    it("a released claim is taken at once; a claim opened in a unit that fails is not recorded", async () => {
      const { store } = h();
      const messageId = newId();
      const conversationId = newId();
      await store.transaction(async (tx) =>
        tx.replies.open({ messageId, conversationId, claim: "a", leaseUntil: 5000 }),
      );
      expect(await store.replies.take({ messageId, conversationId, claim: "b", leaseUntil: 9000 }, 100)).toBe(false);
      await store.replies.release(messageId, "a");
      expect(await store.replies.take({ messageId, conversationId, claim: "b", leaseUntil: 9000 }, 100)).toBe(true);
      const other = newId();
      await expect(
        store.transaction(async (tx) => {
          await tx.replies.open({ messageId: other, conversationId, claim: "x", leaseUntil: 5000 });
          throw new Error("the write failed");
        }),
      ).rejects.toThrow("the write failed");
      expect(await store.replies.find(other)).toBeUndefined();
    });

    it("a reply's unit of work whose claim was taken over fails with ReplyClaimLost and keeps none of its writes", async () => {
      const { store } = h();
      const messageId = newId();
      const conversationId = newId();
      expect(await store.replies.take({ messageId, conversationId, claim: "a", leaseUntil: 1000 }, 0)).toBe(true);
      expect(await store.replies.take({ messageId, conversationId, claim: "b", leaseUntil: 9000 }, 1000)).toBe(true);
      const written = newId();
      // The lost claim's completion last in the unit, and followed by a statement the unit waits for.
      for (const then of [async () => undefined, (tx: Pick<typeof store, "replies">) => tx.replies.find(written)])
        await expect(
          store.transaction(async (tx) => {
            await tx.replies.open({ messageId: written, conversationId, claim: "x", leaseUntil: 5000 });
            await tx.replies.complete(messageId, "a", 2);
            await then(tx);
          }),
        ).rejects.toBeInstanceOf(ReplyClaimLost);
      expect(await store.replies.find(written)).toBeUndefined();
      expect((await store.replies.find(messageId))?.replyOrder).toBeNull();
      // The holder's completes, with the unit's other writes.
      await store.transaction(async (tx) => {
        await tx.replies.open({ messageId: written, conversationId, claim: "x", leaseUntil: 5000 });
        await tx.replies.complete(messageId, "b", 2);
      });
      expect((await store.replies.find(messageId))?.replyOrder).toBe(2);
      expect(await store.replies.find(written)).toBeDefined();
    });

    it("of many callers taking one message's reply at once, exactly one holds it", async () => {
      const { store } = h();
      for (let round = 0; round < 5; round++) {
        const messageId = newId();
        const conversationId = newId();
        const won = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            store.replies.take({ messageId, conversationId, claim: `c${i}`, leaseUntil: 10_000 }, 0),
          ),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
      }
    });
  });
}
