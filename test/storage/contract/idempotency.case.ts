import { describe, expect, it } from "vitest";
import type { IdempotencyRecord } from "../../../src/domain/idempotency/repository.js";
import type { Harness } from "./harness.js";

const rec = (owner: string, key: string, answer: string, createdAt: number): IdempotencyRecord => ({
  owner,
  key,
  requestHash: `hash of ${answer}`,
  answer,
  createdAt,
});

/** Idempotency keys: one write per (owner, key) within the window, rolled back with its unit of work. */
export function idempotencyCases(h: () => Harness) {
  describe("idempotency keys", () => {
    it("records a key once per owner; a fresh holder keeps it, a stale one is replaced; pruning drops the old", async () => {
      const { store } = h();
      expect(await store.idempotency.insert(rec("o1", "k", "first", 1000), 0)).toBe(true);
      expect(await store.idempotency.insert(rec("o1", "k", "second", 1001), 0)).toBe(false);
      // Another owner's same key is another key.
      expect(await store.idempotency.insert(rec("o2", "k", "other", 1002), 0)).toBe(true);
      expect(await store.idempotency.find("o1", "k")).toEqual(rec("o1", "k", "first", 1000));
      expect(await store.idempotency.find("o3", "k")).toBeUndefined();
      // Older than the window (created before staleBefore): the key names a new write.
      expect(await store.idempotency.insert(rec("o1", "k", "later", 5000), 2000)).toBe(true);
      expect((await store.idempotency.find("o1", "k"))?.answer).toBe("later");
      expect(await store.idempotency.prune(3000, 10)).toBe(1);
      expect(await store.idempotency.find("o2", "k")).toBeUndefined();
      expect(await store.idempotency.find("o1", "k")).toBeDefined();
    });

    it("a key recorded in a unit of work that fails is not recorded", async () => {
      const { store } = h();
      await expect(
        store.transaction(async (tx) => {
          await tx.idempotency.insert(rec("o9", "k", "rolled back", 1), 0);
          throw new Error("the write failed");
        }),
      ).rejects.toThrow("the write failed");
      expect(await store.idempotency.find("o9", "k")).toBeUndefined();
    });
  });
}
