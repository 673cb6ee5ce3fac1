import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { NewEvent } from "../../src/domain/log/repository.js";
import { PgRunner } from "../../src/storage/postgres/db.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { types } from "../../src/storage/postgres/pipeline.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { account, apiKeyRecord, endpoint, message } from "./contract/fixtures.js";

// What the PostgreSQL back end sends together (docs/postgres.md, "Round trips per write"): each round trip is CPU on
// both sides of a 2-core machine, so reads made side by side share one, and a unit's read it does not wait for goes
// with its COMMIT. Counted as calls into the driver, as bench/pg-statements.ts counts them.

const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL round trips skipped: ${skip}`);

let calls = 0;
const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;

describe.skipIf(skip !== undefined)("PostgreSQL round trips", () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: PgRunner;

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 4, types });
    await pool.query("CREATE TABLE probe (n integer NOT NULL)");
    db = new PgRunner(pool);
    pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
      calls++;
      return query.apply(this, a);
    } as typeof pg.Client.prototype.query;
  });
  afterAll(async () => {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
    await pool?.end();
    await database?.drop();
  });

  /** The driver calls `fn` makes. */
  async function counted<T>(fn: () => Promise<T>): Promise<{ calls: number; result: T }> {
    const before = calls;
    const result = await fn();
    return { calls: calls - before, result };
  }

  it("reads made side by side outside a unit share one round trip; a failing one fails alone, the others answer", async () => {
    const both = await counted(() =>
      Promise.all([db.rows("rt_one", "SELECT 1 AS v", []), db.rows("rt_two", "SELECT 2 AS v", [])]),
    );
    expect(both.calls).toBe(1);
    expect(both.result.map((r) => r[0]!.v)).toEqual([1, 2]);
    const [bad, good] = await Promise.allSettled([
      db.rows("rt_div", "SELECT 1 / $1::int AS v", [0]),
      db.rows("rt_two", "SELECT 2 AS v", []),
    ]);
    expect(bad.status).toBe("rejected");
    expect(String((bad as PromiseRejectedResult).reason)).toMatch(/division by zero/);
    expect(good).toEqual({ status: "fulfilled", value: [{ v: 2 }] });
    // A write keeps a round trip of its own, and waits for nothing else.
    const written = await counted(() =>
      Promise.all([
        db.count("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [7]),
        db.rows("rt_one", "SELECT 1 AS v", []),
      ]),
    );
    expect(written.calls).toBe(2);
    await pool.query("DELETE FROM probe");
  });

  it("in a unit, a read it does not wait for goes with the COMMIT, sees the unit's writes, and answers once committed", async () => {
    const unit = await counted(() =>
      db.unit(async () => {
        await db.write("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [1]);
        await db.write("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [2]);
        return { later: db.rows<{ n: number }>("rt_sum", "SELECT sum(n)::int AS n FROM probe", []) };
      }),
    );
    // BEGIN, both inserts, the read and the COMMIT: one round trip.
    expect(unit.calls).toBe(1);
    expect(await unit.result.later).toEqual([{ n: 3 }]);
    expect((await pool.query("SELECT count(*)::int AS n FROM probe")).rows[0].n).toBe(2);
    // Statements the unit waits for side by side go together too.
    const together = await counted(() =>
      db.unit(() =>
        Promise.all([
          db.rows("rt_sum", "SELECT sum(n)::int AS n FROM probe", []),
          db.count("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [4]),
        ]),
      ),
    );
    expect(together.calls).toBe(2); // BEGIN with both, then the COMMIT
    expect(together.result[0]).toEqual([{ n: 3 }]);
    await pool.query("DELETE FROM probe");
  });

  it("a unit that fails rolls back, and a read it queued fails with it instead of waiting forever", async () => {
    let later: Promise<unknown> | undefined;
    await expect(
      db.unit(async () => {
        await db.count("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [1]);
        later = db.rows("rt_sum", "SELECT sum(n)::int AS n FROM probe", []);
        later.catch(() => undefined);
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    await expect(later).rejects.toThrow("undo");
    // A failing statement among those sent together fails the unit; nothing of it stays.
    await expect(
      db.unit(async () => {
        await db.write("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [1]);
        const later = db.rows("rt_div", "SELECT 1 / $1::int AS v", [0]);
        later.catch(() => undefined);
        return { later };
      }),
    ).rejects.toThrow(/division by zero/);
    expect((await pool.query("SELECT count(*)::int AS n FROM probe")).rows[0].n).toBe(0);
  });

  it("a write that fails among statements sent before the COMMIT fails the unit, though nobody waited for them", async () => {
    // The failing write went out in the turn's round trip with a read nobody waits for: the server aborted the
    // transaction, so a COMMIT would only roll back; the unit must fail with the write's failure instead.
    await expect(
      db.unit(async () => {
        await db.write("rt_ins", "INSERT INTO probe (n) VALUES ($1)", [1]);
        await db.write("rt_ins_div", "INSERT INTO probe (n) VALUES (1 / $1::int)", [0], () => new Error("lost"));
        db.rows("rt_one", "SELECT 1 AS v", []).catch(() => undefined);
        await new Promise((resolve) => setImmediate(resolve));
      }),
    ).rejects.toThrow("lost");
    expect((await pool.query("SELECT count(*)::int AS n FROM probe")).rows[0].n).toBe(0);
  });

  it("a session issued for a key seen valid is one round trip, issued or refused, with a launch code or a profile", async () => {
    const store: PgStore = await openPgStore(database.url);
    try {
      const acc = await account(store);
      const key = apiKeyRecord(acc.accountId);
      await store.apiKeys.insert(key);
      const token = (userId: string) => ({
        tokenHash: newId(),
        sessionId: newId(),
        accountId: acc.accountId,
        chatbotId: acc.chatbotId,
        userId,
        createdAt: 10,
        expiresAt: 1000,
        revokedAt: null,
        lastUsedAt: 10,
        lastOrigin: "",
        userAgent: "",
      });
      const issue = (userId: string) => store.issueSession({ keyHash: key.keyHash, token: token(userId) });
      const issued = await counted(() => issue("u1"));
      expect(issued).toEqual({ calls: 1, result: { issued: true, apiKeyId: key.apiKeyId, keyLastUsedAt: null } });
      // With a launch code, a contact profile, or both: still one statement, issued or refused for its origin.
      const more = (userId: string, embedOrigin: string | undefined, contactName: string) =>
        store.issueSession({
          keyHash: key.keyHash,
          token: token(userId),
          launch: embedOrigin === undefined ? undefined : { codeHash: newId(), expiresAt: 70, embedOrigin },
          profile: contactName ? { contactName, email: "", phoneNumber: "" } : undefined,
        });
      for (const [userId, origin, name] of [
        ["u3", "", ""],
        ["u4", undefined, "Ann"],
        ["u4", "https://shop.example", "Ann Lee"],
      ] as const)
        expect(await counted(() => more(userId, origin, name))).toMatchObject({ calls: 1, result: { issued: true } });
      expect(await counted(() => more("u5", "https://elsewhere.example", "Bo"))).toEqual({
        calls: 1,
        result: { issued: false, revoked: false, allowedOrigins: ["https://shop.example"] },
      });
      await store.apiKeys.revoke(acc.accountId, key.apiKeyId, 5);
      expect(await counted(() => issue("u2"))).toEqual({ calls: 1, result: { issued: false, revoked: true } });
    } finally {
      await store.close();
    }
  });

  it("a customer's message wakes its conversation without a statement when the append's row says it is not snoozed", async () => {
    const store: PgStore = await openPgStore(database.url);
    try {
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true });
      const customer = {
        messageId: "",
        role: "user" as const,
        content: "hello",
        toolCalls: "",
        documents: [],
        createdAt: 2,
      };
      // The message's unit as the domain writes it: the append, then the wake of any snooze.
      const unit = () =>
        counted(() =>
          store.transaction(async (tx) => {
            await tx.conversations.append(id, { ...customer, messageId: newId() }, { unread: true, reopens: false });
            return tx.timers.wake(id, null);
          }),
        );
      // Not snoozed: BEGIN with the append, then the COMMIT (with the placing of nothing queued: no events here).
      const quiet = await unit();
      expect(quiet.result).toBe(false);
      expect(quiet.calls).toBe(2);
      // Snoozed: the wake is a statement, it ends the snooze and says so.
      await store.transaction((tx) => tx.timers.setSnooze(id, 10_000));
      const snoozed = await unit();
      expect(snoozed.result).toBe(true);
      expect(snoozed.calls).toBe(3);
      expect((await store.timers.states([id])).get(id)?.snoozedUntil ?? null).toBeNull();
      // A snooze set in the same unit after the append is not answered from the append's row.
      const again = await counted(() =>
        store.transaction(async (tx) => {
          await tx.conversations.append(id, { ...customer, messageId: newId() }, { unread: true, reopens: false });
          await tx.timers.setSnooze(id, 20_000);
          return tx.timers.wake(id, null);
        }),
      );
      expect(again.result).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("another instance hears whether an append recorded webhook deliveries (its dispatcher wakes only then)", async () => {
    const a: PgStore = await openPgStore(database.url);
    const b: PgStore = await openPgStore(database.url);
    try {
      const acc = await account(a);
      const { endpointId } = await endpoint(a, acc.accountId);
      const heard: { conversationId: string; deliveries: boolean }[] = [];
      let told: () => void = () => undefined;
      const stop = await b.onLogAdvanced((changes, deliveries) => {
        for (const c of changes ?? []) heard.push({ conversationId: c.conversationId, deliveries });
        if (heard.length === 2) told();
      });
      const both = new Promise<void>((resolve) => {
        told = resolve;
      });
      const event = (orderKey: string): NewEvent => ({
        eventId: newId(),
        accountId: acc.accountId,
        type: "message.created",
        orderKey,
        data: { conversationId: orderKey },
        createdAt: 1,
      });
      await a.transaction((tx) => tx.events.add([{ event: event("quiet"), deliveries: [] }]));
      await a.transaction((tx) =>
        tx.events.add([{ event: event("hooked"), deliveries: [{ deliveryId: newId(), endpointId }] }]),
      );
      await both;
      stop();
      expect(heard).toEqual([
        { conversationId: "quiet", deliveries: false },
        { conversationId: "hooked", deliveries: true },
      ]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
