import { describe, expect, it } from "vitest";
import { isDomainError } from "../../../src/domain/errors.js";
import { newId } from "../../../src/domain/ids.js";
import { account, apiKeyRecord } from "./fixtures.js";
import type { Harness } from "./harness.js";

const tick = () => new Promise((r) => setTimeout(r, 5));

/** The unit of work, durability, readiness and faults. */
export function transactionCases(h: () => Harness) {
  const newAccount = (email: string) => ({ accountId: newId(), email, passwordHash: null, active: true, createdAt: 1 });

  describe("transactions", () => {
    it("commits every write of a callback that awaits between them, and returns its result", async () => {
      const { store } = h();
      const r = await store.transaction(async (tx) => {
        await tx.accounts.insert(newAccount("t1@x.example"));
        await tick();
        await tx.accounts.insert(newAccount("t2@x.example"));
        return "done";
      });
      expect(r).toBe("done");
      expect((await store.accounts.page("", 10)).map((a) => a.email)).toEqual(["t1@x.example", "t2@x.example"]);
    });

    it("rolls back every write when the callback throws, and passes the error on", async () => {
      const { store } = h();
      const boom = new Error("boom");
      await expect(
        store.transaction(async (tx) => {
          await tx.accounts.insert(newAccount("r1@x.example"));
          await tick();
          await tx.accounts.insert(newAccount("r2@x.example"));
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.accounts.any()).toBe(false);
    });

    it("a failing statement inside rolls back the earlier ones too", async () => {
      const { store } = h();
      await store.accounts.insert(newAccount("dup@x.example"));
      await expect(
        store.transaction(async (tx) => {
          await tx.accounts.insert(newAccount("new@x.example"));
          await tx.accounts.insert(newAccount("dup@x.example"));
        }),
      ).rejects.toThrow();
      expect(await store.accounts.byEmail("new@x.example")).toBeUndefined();
    });

    it("a call from outside waits for an open unit of work and never sees its uncommitted rows", async () => {
      const { store } = h();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let inserted!: () => void;
      const insertedP = new Promise<void>((r) => (inserted = r));
      const tx = store.transaction(async (t) => {
        await t.accounts.insert(newAccount("open@x.example"));
        inserted();
        await gate;
        throw new Error("abandon");
      });
      await insertedP;
      const outside = store.accounts.byEmail("open@x.example");
      release();
      await expect(tx).rejects.toThrow("abandon");
      expect(await outside).toBeUndefined();
    });

    it("concurrent units of work that read then write serialise: no update is lost", async () => {
      const { store } = h();
      const a = await account(store);
      // Each unit reads the key list and adds one key named after the count it saw.
      await Promise.all(
        Array.from({ length: 10 }, () =>
          store.transaction(async (tx) => {
            const n = (await tx.apiKeys.listForAccount(a.accountId)).length;
            await tick();
            await tx.apiKeys.insert(apiKeyRecord(a.accountId, { name: String(n), createdAt: n }));
          }),
        ),
      );
      const names = (await store.apiKeys.listForAccount(a.accountId)).map((k) => k.name);
      expect(names).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
    });

    it("a unit of work inside another joins it", async () => {
      const { store } = h();
      await expect(
        store.transaction(async (tx) => {
          await tx.accounts.insert(newAccount("outer@x.example"));
          await store.transaction(async (inner) => inner.accounts.insert(newAccount("inner@x.example")));
          throw new Error("undo both");
        }),
      ).rejects.toThrow("undo both");
      expect(await store.accounts.any()).toBe(false);
    });
  });

  describe("durability, readiness and faults", () => {
    it("durable() resolves once what was written is durable; ready() is true while the back end answers", async () => {
      const { store } = h();
      await store.accounts.insert(newAccount("d@x.example"));
      await store.durable();
      expect(await store.ready()).toBe(true);
    });

    it("a held write lock answers unavailable with a retry delay, changes nothing, and writes work again after", async () => {
      const harness = h();
      const { store } = harness;
      const releaseLock = await harness.holdWriteLock();
      let err: unknown;
      try {
        await store.accounts.insert(newAccount("blocked@x.example"));
      } catch (e) {
        err = e;
      }
      await releaseLock();
      expect(isDomainError(err) && err.kind).toBe("unavailable");
      expect(isDomainError(err) && err.extra.retryAfterSeconds).toBeGreaterThan(0);
      expect(await store.accounts.byEmail("blocked@x.example")).toBeUndefined();
      await store.accounts.insert(newAccount("blocked@x.example"));
      expect(await store.accounts.byEmail("blocked@x.example")).toBeDefined();
    });

    it("a unit of work that cannot take the lock fails as unavailable and leaves the store usable", async () => {
      const harness = h();
      const { store } = harness;
      const releaseLock = await harness.holdWriteLock();
      const r = await store
        .transaction(async (tx) => tx.accounts.insert(newAccount("x@x.example")))
        .catch((e: unknown) => e);
      await releaseLock();
      expect(isDomainError(r) && r.kind).toBe("unavailable");
      await store.transaction(async (tx) => tx.accounts.insert(newAccount("x@x.example")));
      expect(await store.accounts.any()).toBe(true);
    });
  });
}
