import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { openSqliteStore, type SqliteStore } from "../../src/storage/sqlite/index.js";
import { apiKeyRecord } from "./contract/fixtures.js";

// The SQLite store tells a unit of work's own calls from others' with async contexts, which it turns off while no
// unit is open (Node then stops hooking every promise): a unit that starts after another has finished must behave
// as the first one did.
let dir: string;
let store: SqliteStore;
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = () => {
  dir = mkdtempSync(join(tmpdir(), "aiagent-units-"));
  store = openSqliteStore(join(dir, "t.db"), { synchronous: "OFF" });
  return store;
};
const acct = (email: string) => ({ accountId: newId(), email, passwordHash: null, active: true, createdAt: 1 });
const tick = () => new Promise((r) => setTimeout(r, 2));

/** Counts the statements run from now on (prepared ones: the store prepares its transaction's), by their text. */
function statementsRun(): (sql: string) => number {
  const proto = Object.getPrototypeOf(store.db.prepare("SELECT 1"));
  const spy = vi.spyOn(proto, "run");
  spy.mockClear();
  return (sql) => spy.mock.contexts.filter((st) => (st as { source: string }).source === sql).length;
}

describe("units of work, one after another", () => {
  it("each later unit joins a nested one and lets its own outside calls through, as the first did", async () => {
    const s = open();
    for (let i = 0; i < 3; i++) {
      await expect(
        s.transaction(async (tx) => {
          await tx.accounts.insert(acct(`outer${i}@x.example`));
          await tick();
          // An outside call made inside the unit sees the unit's row instead of waiting for it (a deadlock).
          expect(await s.accounts.byEmail(`outer${i}@x.example`)).toBeDefined();
          await s.transaction(async (inner) => inner.accounts.insert(acct(`inner${i}@x.example`)));
          throw new Error("undo both");
        }),
      ).rejects.toThrow("undo both");
      expect(await s.accounts.any()).toBe(false);
      await tick();
    }
  });

  it("while units overlap, a call from outside still waits for the open one", async () => {
    const s = open();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = s.transaction(async (tx) => {
      await tx.accounts.insert(acct("a@x.example"));
      await gate;
    });
    const second = s.transaction(async (tx) => tx.accounts.insert(acct("b@x.example")));
    await tick();
    const outside = s.accounts.byEmail("a@x.example");
    let seen = false;
    void outside.then(() => (seen = true));
    await tick();
    expect(seen).toBe(false);
    release();
    await Promise.all([first, second]);
    expect(await outside).toBeDefined();
    expect(await s.accounts.byEmail("b@x.example")).toBeDefined();
  });

  it("units that arrive together share one commit, each in its own savepoint: one that fails is undone alone", async () => {
    const s = open();
    const run = statementsRun();
    const results = await Promise.allSettled(
      [0, 1, 2, 3, 4].map((i) =>
        s.transaction(async (tx) => {
          await tx.accounts.insert(acct(`u${i}@x.example`));
          if (i === 2) throw new Error("unit 2 fails");
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect([run("BEGIN IMMEDIATE"), run("COMMIT")]).toEqual([1, 1]);
    for (const i of [0, 1, 3, 4]) expect(await s.accounts.byEmail(`u${i}@x.example`)).toBeDefined();
    expect(await s.accounts.byEmail("u2@x.example")).toBeUndefined();
  });

  it("the first unit of a transaction takes no savepoint; if it fails, the units behind it commit in a new one", async () => {
    const s = open();
    const run = statementsRun();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = s.transaction(async (tx) => {
      await tx.accounts.insert(acct("first@x.example"));
      await gate;
      throw new Error("the first unit fails");
    });
    const behind = [0, 1, 2].map((i) => s.transaction(async (tx) => tx.accounts.insert(acct(`b${i}@x.example`))));
    await tick();
    release();
    await expect(first).rejects.toThrow("the first unit fails");
    await Promise.all(behind);
    expect(await s.accounts.byEmail("first@x.example")).toBeUndefined();
    for (const i of [0, 1, 2]) expect(await s.accounts.byEmail(`b${i}@x.example`)).toBeDefined();
    // The failed unit's transaction was rolled back whole; the next one's first unit took none either.
    expect([run("BEGIN IMMEDIATE"), run("ROLLBACK"), run("COMMIT"), run("SAVEPOINT unit")]).toEqual([2, 1, 1, 2]);
  });

  it("a self-contained unit runs outside the async contexts, and its event log refuses appends", async () => {
    const s = open();
    const run = vi.spyOn(AsyncLocalStorage.prototype, "run");
    await Promise.all([
      s.transaction(async (tx) => tx.accounts.insert(acct("contained@x.example")), { selfContained: true }),
      s.transaction(async (tx) => tx.accounts.insert(acct("contained2@x.example")), { selfContained: true }),
    ]);
    // Nothing turned the contexts on: Node hooks no promise while only such units run.
    expect(run).not.toHaveBeenCalled();
    expect(await s.accounts.byEmail("contained@x.example")).toBeDefined();
    await expect(s.transaction(async (tx) => tx.events.add([]), { selfContained: true })).rejects.toThrow(
      "appends no event",
    );
    // An ordinary unit still runs in them (its own outside calls and nested units are told apart).
    await s.transaction(async (tx) => tx.accounts.insert(acct("ordinary@x.example")));
    expect(run).toHaveBeenCalled();
    run.mockRestore();
  });

  it("a unit is answered once its transaction is committed, and a commit that fails fails every unit in it", async () => {
    const s = open();
    await s.transaction(async (tx) => tx.accounts.insert(acct("first@x.example")));
    expect(s.db.inTransaction).toBe(false);
    const ghost = "00000000-0000-4000-8000-000000000000";
    const [ok, bad] = await Promise.allSettled([
      s.transaction(async (tx) => tx.accounts.insert(acct("second@x.example"))),
      s.transaction(async (tx) => {
        // A foreign key checked only at COMMIT: the commit of the units sharing the transaction fails.
        s.db.pragma("defer_foreign_keys = ON");
        await tx.apiKeys.insert(apiKeyRecord(ghost));
      }),
    ]);
    expect(ok.status).toBe("rejected");
    expect(bad.status).toBe("rejected");
    expect(s.db.inTransaction).toBe(false);
    expect(await s.accounts.byEmail("second@x.example")).toBeUndefined();
    // The store goes on: the next unit commits.
    await s.transaction(async (tx) => tx.accounts.insert(acct("third@x.example")));
    expect(await s.accounts.byEmail("third@x.example")).toBeDefined();
  });
});
