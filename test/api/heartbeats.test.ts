import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { loadConfig } from "../../src/config.js";
import { Heartbeats } from "../../src/protocol/heartbeats.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { isHeartbeat as isBeat, type NdjsonReader, openNdjson, type StreamLine } from "../helpers/ndjson.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled, waitFor } from "../helpers/time-scale.js";

// Cheap idle streams (issue 44): an idle watch stream is sent a heartbeat every AIAGENT_STREAM_HEARTBEAT_MS (an item
// with no event and the cursor of the last event), and one timer serves every open stream; the streams' tokens'
// expiry shares one timer as well (the expiry itself: watch-conversation.test.ts).

const INTERVAL = scaled(400);

let s: TestServer;
let a: TestAccount;
const open: NdjsonReader[] = [];

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_STREAM_HEARTBEAT_MS: String(INTERVAL) } });
  a = await s.account();
});
afterAll(async () => {
  await Promise.all(open.map((r) => r.cancel().catch(() => undefined)));
  await s?.close(true);
});

/** A frame's stream on a new conversation of `userId`, read past its stored events (the state and two messages). */
async function idleFrame(userId: string): Promise<{ r: NdjsonReader; token: string; id: string }> {
  const token = (await issueTokens(s.url, a, userId)).access_token;
  const id = (await send(s.url, token, "hello")).conversation_id;
  const q = { conversation_id: id, access_token: token };
  const r = await openNdjson(`${s.url}/watch_conversation?${new URLSearchParams(q)}`, {}, { heartbeats: true });
  open.push(r);
  expect(r.response.status).toBe(200);
  // The state and the two messages; on a loaded machine a beat of the stream may come between them (it carries
  // the cursor of what was sent before it), so beats are passed over here, up to a bound.
  let events = 0;
  for (let lines = 0; events < 3; lines++) {
    expect(lines, "the state and the two messages, among the stream's first lines").toBeLessThan(10);
    if (!isBeat(await r.next())) events++;
  }
  return { r, token, id };
}

describe("heartbeats of an idle stream", () => {
  test("an idle frame stream gets a heartbeat every interval, with the cursor of its last event", async () => {
    const opened = performance.now();
    const { r } = await idleFrame("beat-1");
    for (let i = 0; i < 3; i++) {
      const l = await r.next();
      expect(isBeat(l)).toBe(true);
      expect(l!.result).toEqual({ cursor: "2" });
    }
    // No more beats than the interval allows over the whole span, which began before the stream did: a reader
    // that is slow only makes the span longer (it cannot see two beats closer than they were sent, as gaps
    // measured between its reads would). The schedule itself, beat by beat: "the server's schedule" below.
    const span = performance.now() - opened;
    expect(3).toBeLessThanOrEqual(1 + span / INTERVAL);
  });

  test("a heartbeat after a new message carries that message's cursor (resuming from it skips nothing)", async () => {
    const { r, token, id } = await idleFrame("beat-2");
    await send(s.url, token, "more", id);
    const seen: StreamLine[] = [];
    await waitFor("a heartbeat after the new message and its reply", async () => {
      const l = await r.next();
      seen.push(l!);
      return isBeat(l) && seen.some((x) => x.result?.message?.message_order === 4);
    });
    expect(seen.at(-1)!.result).toEqual({ cursor: "4" });
  });

  test("over Connect a heartbeat is an item with no event and the last cursor", async () => {
    const token = (await issueTokens(s.url, a, "beat-3")).access_token;
    const id = (await send(s.url, token, "hello")).conversation_id;
    const { conversations } = rpcClients(s.url, "connect-json");
    const abort = new AbortController();
    const it = conversations
      .watchConversation({ conversationId: id, accessToken: token }, { signal: abort.signal })
      [Symbol.asyncIterator]();
    try {
      for (let i = 0; i < 3; i++) expect((await it.next()).value?.event.case).toBeDefined();
      const beat = (await it.next()).value;
      expect(beat?.event.case).toBeUndefined();
      expect(beat?.cursor).toBe("2");
    } finally {
      abort.abort();
    }
  });

  test("the team's WatchAccount stream gets heartbeats too", async () => {
    const r = await openNdjson(
      `${s.url}/watch_account?${new URLSearchParams({ user_email_id: a.email })}`,
      { authorization: `Bearer ${await idToken(s.url, a)}` },
      { heartbeats: true },
    );
    open.push(r);
    const first = await r.next();
    expect(first?.result?.subscribed_at).toBeDefined();
    const beat = await r.next();
    expect(isBeat(beat)).toBe(true);
    expect(beat!.result.cursor).toBe(first!.result.cursor);
  });
});

describe("the server's schedule, on a test clock", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  test("each stream is beaten once per interval, never sooner, from one timer; none once it leaves", () => {
    vi.useFakeTimers();
    const hb = new Heartbeats(800);
    const beats = new Map<number, number[]>();
    const leave = Array.from({ length: 12 }, (_, i) => {
      beats.set(i, []);
      // Joined at different moments, as streams are: each on its own tick of the one timer.
      vi.advanceTimersByTime(37);
      return hb.join(() => beats.get(i)!.push(Date.now()));
    });
    expect(hb.timers).toBe(1);
    vi.advanceTimersByTime(800 * 5);
    for (const at of beats.values()) {
      expect(at.length).toBeGreaterThanOrEqual(4);
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBe(800);
    }
    expect(hb.sent).toBe([...beats.values()].reduce((n, at) => n + at.length, 0));
    for (const l of leave) l();
    expect(hb.timers).toBe(0);
    const sent = hb.sent;
    vi.advanceTimersByTime(800 * 3);
    expect(hb.sent).toBe(sent);
  });
});

describe("one timer for all streams", () => {
  test("twelve open streams are beaten by one timer; it stops when the last one ends", async () => {
    const hb = s.app.heartbeats;
    const before = hb.streams;
    const readers = await Promise.all(Array.from({ length: 12 }, (_, i) => idleFrame(`many-${i}`)));
    // Every stream joins once it has sent its first event; each then gets its heartbeats.
    await waitFor("the twelve streams joined the heartbeats", () => hb.streams === before + 12);
    expect(hb.timers).toBe(1);
    // Their tokens' expiry too: one deadline per stream, one timer for all of them.
    const dl = s.app.deadlines;
    expect(dl.pending).toBe(hb.streams);
    expect(dl.timers).toBe(1);
    for (const { r } of readers) expect(isBeat(await r.next())).toBe(true);
    expect(hb.timers).toBe(1);
    for (const { r } of readers) await r.cancel();
    // The earlier tests' streams are cancelled too: then no stream is left, and no timer.
    for (const r of open) await r.cancel().catch(() => undefined);
    await waitFor("every stream left the heartbeats", () => hb.streams === 0);
    expect(hb.timers).toBe(0);
    await waitFor("every stream's deadline cancelled", () => dl.pending === 0);
    expect(dl.timers).toBe(0);
  });
});

describe("the setting", () => {
  test("AIAGENT_STREAM_HEARTBEAT_MS: 25 s by default, 0 for none, else 100 to 3600000", () => {
    expect(loadConfig({}).watchStreams.heartbeatMs).toBe(25_000);
    expect(loadConfig({ AIAGENT_STREAM_HEARTBEAT_MS: "0" }).watchStreams.heartbeatMs).toBe(0);
    expect(loadConfig({ AIAGENT_STREAM_HEARTBEAT_MS: "100" }).watchStreams.heartbeatMs).toBe(100);
    for (const bad of ["50", "3600001", "abc", "-1"])
      expect(() => loadConfig({ AIAGENT_STREAM_HEARTBEAT_MS: bad })).toThrow(/AIAGENT_STREAM_HEARTBEAT_MS/);
  });

  test("with 0 an open stream gets no heartbeat and no timer runs", async () => {
    const c = await startServer({ env: { AIAGENT_STREAM_HEARTBEAT_MS: "0" } });
    try {
      const acc = await c.account();
      const token = (await issueTokens(c.url, acc, "no-beat")).access_token;
      const id = (await send(c.url, token, "hello")).conversation_id;
      const r = await openNdjson(
        `${c.url}/watch_conversation?${new URLSearchParams({ conversation_id: id, access_token: token })}`,
        {},
        { heartbeats: true },
      );
      for (let i = 0; i < 3; i++) await r.next();
      // A message written after the stream is idle arrives next: no heartbeat came before it.
      await send(c.url, token, "more", id);
      expect((await r.next())?.result?.message?.message_order).toBe(3);
      expect(c.app.heartbeats.timers).toBe(0);
      await r.cancel();
    } finally {
      await c.close(true);
    }
  });
});
