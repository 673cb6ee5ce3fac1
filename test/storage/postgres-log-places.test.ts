import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { newId } from "../../src/domain/ids.js";
import type { ConversationEvent } from "../../src/domain/log/events.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { waitFor } from "../helpers/time-scale.js";
import { accountReader } from "./account-reader.js";
import { account, endpoint, event, message } from "./contract/fixtures.js";

// On PostgreSQL an event takes its place in its account's log after its writer's commit (sequencer.ts): writers of
// one account hold no lock across their commits. These cases are the failure points that design adds: a process
// dying between its commit and the placing, and writers of one account on two instances at once.

const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL log places skipped: ${skip}`);

/** A process that dies right after its unit of work committed: its placing never runs (nor goes with the COMMIT). */
function dieAfterCommit(store: PgStore): void {
  const sequencer = (store as unknown as { sequencer: { place(): Promise<void>; atCommit(): undefined } }).sequencer;
  sequencer.place = () => Promise.reject(new Error("the process died after its commit"));
  sequencer.atCommit = () => undefined;
}

/** What a watcher does: on every hint for the account, reads the log after its own position. */
async function follow(store: PgStore, accountId: string) {
  const seen: { seq: number; eventId: string }[] = [];
  let reading = Promise.resolve();
  const read = () => {
    reading = reading.then(async () => {
      const after = seen.at(-1)?.seq ?? 0;
      for (const e of await store.events.list(accountId, after, 1000, []))
        seen.push({ seq: e.seq, eventId: e.eventId });
    });
  };
  const stop = await store.onLogAdvanced((changes: readonly ConversationEvent[] | undefined) => {
    if (changes === undefined || changes.some((c) => c.accountId === accountId)) read();
  });
  return { seen, stop };
}

describe.skipIf(skip !== undefined)("PostgreSQL log places", () => {
  let database: TestDatabase;
  const stores: PgStore[] = [];
  const open = async (lockTimeoutMs?: number) => {
    const s = await openPgStore(database.url, { poolSize: 4, lockTimeoutMs });
    stores.push(s);
    return s;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await database?.drop();
  });

  it("events a process committed but died before placing get places at the next write of the account, first, once", async () => {
    const [dying, other] = [await open(), await open()];
    const a = await account(other);
    const ep = await endpoint(other, a.accountId);
    const first = event(a.accountId, "c1");
    dieAfterCommit(dying);
    await expect(
      dying.transaction((tx) =>
        tx.events.add([{ event: first, deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] }]),
      ),
    ).rejects.toThrow("died after its commit");
    // Committed, not readable yet: it has no place.
    expect(await other.events.list(a.accountId, 0, 10, [])).toEqual([]);
    const follower = await follow(other, a.accountId);
    const second = event(a.accountId, "c1");
    await other.transaction((tx) => tx.events.add([{ event: second, deliveries: [] }]));
    // When the next writer's unit returns, both are readable, the dead process's first (its order in the queue).
    expect((await other.events.list(a.accountId, 0, 10, [])).map((e) => [e.seq, e.eventId])).toEqual([
      [1, first.eventId],
      [2, second.eventId],
    ]);
    // Its delivery was recorded with it, at its place.
    expect((await other.webhooks.deliveries(ep.endpointId, 10, undefined)).map((d) => d.eventSeq)).toEqual([1]);
    await vi.waitFor(() => expect(follower.seen.map((e) => e.seq)).toEqual([1, 2]), { timeout: 10_000 });
    follower.stop();
  });

  it("with no further write, the sweep of a listening instance places them and announces them once", async () => {
    const [dying, other] = [await open(), await open()];
    const a = await account(other);
    dieAfterCommit(dying);
    const lost = [event(a.accountId, "c1"), event(a.accountId, "c2")];
    await expect(
      dying.transaction((tx) => tx.events.add(lost.map((e) => ({ event: e, deliveries: [] })))),
    ).rejects.toThrow("died after its commit");
    const follower = await follow(other, a.accountId);
    await vi.waitFor(() => expect(follower.seen.map((e) => e.eventId)).toEqual(lost.map((e) => e.eventId)), {
      timeout: 10_000,
    });
    expect(follower.seen.map((e) => e.seq)).toEqual([1, 2]);
    expect(await other.events.lastSeq(a.accountId)).toBe(2);
    follower.stop();
  });

  it("writers of one account on two instances at once: each reads its own events at once; every reader sees every event once, in place order", async () => {
    const [one, two] = [await open(), await open()];
    const a = await account(one);
    const ep = await endpoint(one, a.accountId);
    const followers = [await follow(one, a.accountId), await follow(two, a.accountId)];
    const written: string[] = [];
    const write = async (store: PgStore, i: number) => {
      const e = event(a.accountId, `c${i % 5}`);
      written.push(e.eventId);
      await store.transaction(
        (tx) => tx.events.add([{ event: e, deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] }]),
        { rowLocks: true },
      );
      // Read your writes: answered, so readable (a client resuming right after finds it).
      const placed = await store.events.list(a.accountId, 0, 1000, []);
      expect(placed.map((x) => x.eventId)).toContain(e.eventId);
    };
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 10; i++) await write(w % 2 === 0 ? one : two, w * 10 + i);
      }),
    );
    const n = written.length;
    const all = await one.events.list(a.accountId, 0, 1000, []);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(new Set(all.map((e) => e.eventId))).toEqual(new Set(written));
    for (const f of followers) {
      await vi.waitFor(() => expect(f.seen).toHaveLength(n), { timeout: 10_000 });
      expect(f.seen.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(f.seen.map((e) => e.eventId)).toEqual(all.map((e) => e.eventId));
      f.stop();
    }
    const deliveries = await one.webhooks.deliveries(ep.endpointId, 1000, undefined);
    expect(deliveries.map((d) => d.eventSeq).sort((x, y) => x - y)).toEqual(all.map((e) => e.seq));
  });

  it("an instance's readers take what its placings placed without reading it back; every follower on two instances gets every entry once, in place order, as stored", async () => {
    const [one, two] = [await open(), await open()];
    const a = await account(one);
    const readers = await Promise.all([one, two].map((store) => accountReader(store, a.accountId)));
    const written: string[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 8; i++) {
          const e = event(a.accountId, `c${(w + i) % 3}`);
          written.push(e.eventId);
          await (w % 2 === 0 ? one : two).transaction((tx) => tx.events.add([{ event: e, deliveries: [] }]));
        }
      }),
    );
    const all = await one.events.list(a.accountId, 0, 1000, []);
    expect(all).toHaveLength(written.length);
    for (const r of readers) {
      await vi.waitFor(() => expect(r.got).toHaveLength(all.length), { timeout: 10_000 });
      // Handed or read, the same entries: in place order, once, each as the log stores it.
      expect(r.got).toEqual(all);
      // Some of this instance's placings reached its reader without a read of the log.
      expect(r.logs.counts.handed).toBeGreaterThan(0);
      r.done();
      await r.run;
    }
  });

  it("another instance's placings reach this one's readers in their announcement, without a read; one too large for it is read", async () => {
    const [one, two] = [await open(), await open()];
    const a = await account(one);
    const { logs, got, run, done } = await accountReader(two, a.accountId);
    await waitFor("the reader has read the empty log", () => logs.counts.shared > 0);
    // Written on the other instance only, one placing at a time: each announcement starts just after the reader.
    for (let i = 0; i < 6; i++) {
      await one.transaction((tx) => tx.events.add([{ event: event(a.accountId, `c${i % 2}`), deliveries: [] }]));
      await waitFor("the reader has the entry", () => got.length === i + 1);
    }
    expect(logs.counts.handed).toBe(6);
    const reads = logs.counts.shared;
    // 9,000 characters of data: the announcement goes without the entries (NOTIFY's 8,000 bytes), the reader reads.
    const big = { ...event(a.accountId, "c0"), data: { conversationId: "c0", text: "x".repeat(9000) } };
    await one.transaction((tx) => tx.events.add([{ event: big as ReturnType<typeof event>, deliveries: [] }]));
    await waitFor("the reader has the large entry", () => got.length === 7);
    expect(logs.counts.handed).toBe(6);
    expect(logs.counts.shared).toBeGreaterThan(reads);
    expect(got).toEqual(await one.events.list(a.accountId, 0, 100, []));
    done();
    await run;
  });

  it("a unit of work's events are placed in its COMMIT's round trip, announced once here and to the others", async () => {
    const [one, two] = [await open(), await open()];
    const a = await account(one);
    const heard = { one: [] as string[], two: [] as string[] };
    const stops = [
      await one.onLogAdvanced((changes) => heard.one.push(...(changes ?? []).map((c) => c.conversationId))),
      await two.onLogAdvanced((changes) => heard.two.push(...(changes ?? []).map((c) => c.conversationId))),
    ];
    let calls = 0;
    const query = pg.Client.prototype.query as (...x: unknown[]) => unknown;
    pg.Client.prototype.query = function (this: pg.Client, ...x: unknown[]) {
      calls++;
      return query.apply(this, x);
    } as typeof pg.Client.prototype.query;
    const e = event(a.accountId, "c1");
    try {
      await one.transaction((tx) => tx.events.add([{ event: e, deliveries: [] }]));
    } finally {
      pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
    }
    // BEGIN, the queueing, COMMIT, the advisory lock and the placing: one round trip.
    expect(calls).toBe(1);
    // Placed when the unit returns (read your writes), and told here at once, without a second placing.
    expect((await one.events.list(a.accountId, 0, 10, [])).map((x) => [x.seq, x.eventId])).toEqual([[1, e.eventId]]);
    expect(heard.one).toEqual(["c1"]);
    await waitFor("the other instance hears the placing", () => heard.two.length > 0);
    expect(heard.two).toEqual(["c1"]);
    for (const stop of stops) stop();
  });

  it("a placing that fails after the COMMIT leaves the write committed; it is placed again before the write is answered", async () => {
    const writer = await open(200);
    const a = await account(writer);
    // Another session holds the account's placing lock: the placing sent with the COMMIT times out waiting for it.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [0x6c6f67, a.accountId]);
    /** When each wait for the lock began (a placing tried again waits anew). */
    const waits = async () =>
      (
        await holder.query<{ t: string }>(
          `SELECT waitstart::text AS t FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        )
      ).rows.map((r) => r.t);
    const e = event(a.accountId, "c1");
    const written = writer.transaction((tx) => tx.events.add([{ event: e, deliveries: [] }]));
    try {
      let first: string | undefined;
      await waitFor("the placing waits for the lock", async () => (first = (await waits())[0]) !== undefined, {
        stepMs: 5,
      });
      await waitFor("the placing gives up (lock_timeout)", async () => !(await waits()).includes(first!), {
        stepMs: 5,
      });
      // Committed, not placed yet.
      expect(await writer.events.list(a.accountId, 0, 10, [])).toEqual([]);
    } finally {
      await holder.query("COMMIT");
      await holder.end();
    }
    await written;
    expect((await writer.events.list(a.accountId, 0, 10, [])).map((x) => [x.seq, x.eventId])).toEqual([[1, e.eventId]]);
  });

  it("an erasure redacts the events still waiting for their places", async () => {
    const [dying, other] = [await open(), await open()];
    const a = await account(other);
    const conv = newId();
    await message(other, a, conv, { userId: "alice", at: 1, start: true });
    dieAfterCommit(dying);
    await expect(
      dying.transaction((tx) =>
        tx.events.add([
          { event: event(a.accountId, conv), deliveries: [] },
          {
            event: { ...event(a.accountId, ""), type: "session.revoked", data: { userId: "alice", revoked: 1 } },
            deliveries: [],
          },
        ]),
      ),
    ).rejects.toThrow("died after its commit");
    const alice = (await other.privacy.contact(a.accountId, { userId: "alice" }))!;
    expect((await other.privacy.erase(alice, 70)).eventsRedacted).toBe(2);
    await other.sweep();
    expect((await other.events.list(a.accountId, 0, 10, [])).map((e) => e.data)).toEqual([
      { redacted: true },
      { redacted: true },
    ]);
  });
});
