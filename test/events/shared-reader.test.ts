import { afterEach, describe, expect, test } from "vitest";
import { Watches } from "../../src/domain/conversation/watch.js";
import { newId } from "../../src/domain/ids.js";
import { AccountLogs } from "../../src/domain/log/account-logs.js";
import { LogFeed } from "../../src/domain/log/log-feed.js";
import { waitFor } from "../helpers/time-scale.js";
import { type StorageFixture, storage } from "../storage/fixture.js";

// The live layer at scale (issue 44): every open stream of an account takes its events from one shared reader of
// the account's log, so an advance of the log costs one read of it, however many streams follow it; a stream too
// slow for its bounded queue falls behind alone, reads the store itself, and still gets each event once, in order.

let fx: StorageFixture | undefined;
afterEach(() => {
  fx?.close();
  fx = undefined;
});

/** A real SQLite event log, its reads counted (the repository, wrapped), and the instance's feed and readers. */
function setUp() {
  fx = storage();
  const events = fx.repos.events;
  const reads = { list: 0 };
  const history = {
    list: async (accountId: string, afterSeq: number, limit: number, types: readonly string[]) => {
      reads.list++;
      return events.list(accountId, afterSeq, limit, types);
    },
    lastSeq: async (accountId: string) => events.lastSeq(accountId),
  };
  const feed = new LogFeed();
  // No safety-timer read during the test: every read counted is one the test caused.
  const logs = new AccountLogs({ feed, history }, { lookEveryMs: 3_600_000, outageMs: 5_000 });
  const watches = new Watches({
    events: feed,
    history,
    conversations: { messages: async () => ({ messages: [], hasMore: false }) },
    logs,
  });
  const a = fx.account();
  const conversationId = newId();
  let n = 0;
  /** Commits `count` replies to the account's log in one unit, and announces the advance (as the store does). */
  const write = (count = 1) => {
    events.append(
      Array.from({ length: count }, () => {
        n++;
        return {
          event: {
            eventId: newId(),
            accountId: a.accountId,
            type: "message.created" as const,
            orderKey: conversationId,
            data: { conversationId, message: { messageId: newId(), content: `reply ${n}` } as never },
            createdAt: n,
          },
          deliveries: [],
        };
      }),
    );
    feed.advanced([{ accountId: a.accountId, conversationId }]);
  };
  return { reads, feed, logs, watches, accountId: a.accountId, write, written: () => n };
}

/** An account stream, read as fast as it comes: what it received so far. */
function follow(watches: Watches, accountId: string, signal: AbortSignal) {
  const got: string[] = [];
  const it = watches.account(accountId, 0, "", signal)[Symbol.asyncIterator]();
  const subscribed = it.next();
  const run = (async () => {
    await subscribed;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      if (r.value.type === "message") got.push(r.value.message.content);
    }
  })();
  return { got, subscribed, run, it };
}

const replies = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `reply ${from + i}`);

describe("one shared reader per account", () => {
  test("twelve streams of one account: each advance of its log is one read, and every stream gets every event once", async () => {
    const s = setUp();
    const stop = new AbortController();
    const streams = Array.from({ length: 12 }, () => follow(s.watches, s.accountId, stop.signal));
    await Promise.all(streams.map((f) => f.subscribed));
    expect(s.logs.accounts).toBe(1);
    const before = s.reads.list;
    for (let i = 1; i <= 5; i++) {
      s.write();
      await waitFor(`reply ${i} reaches every stream`, () => streams.every((f) => f.got.length === i));
    }
    // Five advances, five reads of the log: not 12 × 5.
    expect(s.reads.list - before).toBe(5);
    for (const f of streams) expect(f.got).toEqual(replies(1, 5));
    stop.abort();
    await Promise.all(streams.map((f) => f.run));
    // The last stream gone, the reader goes with it.
    expect(s.logs.accounts).toBe(0);
  });

  test("a stream that takes nothing falls behind alone: the others stay current on shared reads, and it later gets every event once, in order", async () => {
    const s = setUp();
    const stop = new AbortController();
    const fast = Array.from({ length: 4 }, () => follow(s.watches, s.accountId, stop.signal));
    // The slow one subscribes and then reads nothing while 700 replies are written (more than its queue holds).
    const slow = s.watches.account(s.accountId, 0, "", stop.signal)[Symbol.asyncIterator]();
    await Promise.all([...fast.map((f) => f.subscribed), slow.next()]);
    const before = s.reads.list;
    for (let i = 0; i < 7; i++) {
      s.write(100);
      await waitFor(`batch ${i} reaches the fast streams`, () => fast.every((f) => f.got.length === (i + 1) * 100));
    }
    // Shared reads only: each advance of 100 entries is a full page, then an empty one.
    expect(s.reads.list - before).toBe(14);
    for (const f of fast) expect(f.got).toEqual(replies(1, 700));
    // Now the slow stream reads: it catches up from the store, page by page, each reply once and in order.
    const got: string[] = [];
    while (got.length < 700) {
      const r = await slow.next();
      if (r.done) break;
      if (r.value.type === "message") got.push(r.value.message.content);
    }
    expect(got).toEqual(replies(1, 700));
    expect(s.reads.list - before).toBeGreaterThan(14);
    // Its last read of the store found it at the reader's place: it is fed again, and the next replies reach it
    // from the shared reader, one read per advance, as they reach the others.
    s.write();
    expect((await slow.next()).value).toMatchObject({ type: "message", message: { content: "reply 701" } });
    const reads = s.reads.list;
    s.write();
    expect((await slow.next()).value).toMatchObject({ type: "message", message: { content: "reply 702" } });
    await waitFor("reply 702 reaches the fast streams", () => fast.every((f) => f.got.length === 702));
    expect(s.reads.list - reads).toBe(1);
    stop.abort();
    await slow.return?.(undefined);
    await Promise.all(fast.map((f) => f.run));
  });

  test("a stream resumed behind the reader catches up from the store, then takes the shared reads", async () => {
    const s = setUp();
    const stop = new AbortController();
    const live = follow(s.watches, s.accountId, stop.signal);
    await live.subscribed;
    s.write(250);
    await waitFor("the live stream has the 250", () => live.got.length === 250);
    // Resumed after the 50th entry: 200 from the store, then live.
    const resumed = s.watches.account(s.accountId, 0, "50", stop.signal)[Symbol.asyncIterator]();
    const got: string[] = [];
    expect((await resumed.next()).value).toMatchObject({ type: "subscribed", cursor: "50" });
    while (got.length < 200) {
      const r = await resumed.next();
      if (r.done) break;
      if (r.value.type === "message") got.push(r.value.message.content);
    }
    expect(got).toEqual(replies(51, 250));
    s.write();
    expect((await resumed.next()).value).toMatchObject({ type: "message", message: { content: "reply 251" } });
    stop.abort();
    await resumed.return?.(undefined);
    await live.run;
  });
});
