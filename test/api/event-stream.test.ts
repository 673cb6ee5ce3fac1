import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { type EventStreamReader, openEventStream, type StreamLine } from "../helpers/ndjson.js";
import { scaled, waitFor } from "../helpers/time-scale.js";

// The frame's watch as server-sent events (docs/live-updates.md, "Server-sent events"): the same JSON stream route,
// asked with Accept: text/event-stream. Each event's id is its cursor, a reconnect's Last-Event-ID resumes right after
// it (each message once, in order), the heartbeats are comment lines, and the access token never goes in the URL.

const fx = serverForFile({ server: { env: { AIAGENT_STREAM_HEARTBEAT_MS: String(scaled(300)) } }, accounts: 2 });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

async function conversation(userId: string) {
  const t = await issueTokens(fx.s.url, fx.a, userId);
  const c = await send(fx.s.url, t.access_token, "hello");
  return { token: t.access_token, id: c.conversation_id as string };
}

const watchUrl = (id: string, extra: Record<string, string> = {}) =>
  `${fx.s.url}/watch_conversation?${new URLSearchParams({ conversation_id: id, ...extra })}`;

/** The stream's events until `n` messages came (heartbeats are counted by the reader, not returned). */
async function untilMessages(r: EventStreamReader, n: number): Promise<(StreamLine & { id?: string })[]> {
  const seen: (StreamLine & { id?: string })[] = [];
  while (seen.filter((e) => e.result?.message).length < n) {
    const e = await r.next();
    if (!e) throw new Error(`the stream ended after ${JSON.stringify(seen)}`);
    seen.push(e);
  }
  return seen;
}

describe("server-sent events on the watch route", () => {
  test("Accept: text/event-stream answers events whose id is the cursor, the same JSON as the NDJSON lines", async () => {
    const { token, id } = await conversation("sse-1");
    const r = await openEventStream(watchUrl(id), bearer(token));
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get("content-type")).toBe("text/event-stream");
    expect(r.response.headers.get("cache-control")).toBe("no-store");
    const seen = await untilMessages(r, 2);
    expect(seen[0]!.result.conversation.conversation_id).toBe(id);
    const messages = seen.filter((e) => e.result?.message);
    expect(messages.map((e) => e.id)).toEqual(["1", "2"]);
    expect(messages.map((e) => e.result.cursor)).toEqual(["1", "2"]);
    await r.cancel();
  });

  test("a reconnect's Last-Event-ID resumes right after that event: each message once, in order", async () => {
    const { token, id } = await conversation("sse-2");
    await send(fx.s.url, token, "and another thing", id);
    // The URL is the one first opened (from the start); Last-Event-ID, the browser's resume cursor, wins over it.
    const r = await openEventStream(watchUrl(id, { after_message_order: "0" }), {
      ...bearer(token),
      "last-event-id": "2",
    });
    const seen = await untilMessages(r, 2);
    expect(seen.filter((e) => e.result?.message).map((e) => e.result.message.message_order)).toEqual([3, 4]);
    await r.cancel();
  });

  test("an idle event stream gets its heartbeats as comment lines", async () => {
    const { token, id } = await conversation("sse-3");
    const r = await openEventStream(watchUrl(id), bearer(token));
    await untilMessages(r, 2);
    // The next read returns only once something other than a beat comes: stop it after two beats were counted.
    const reading = r.next().catch(() => null);
    await waitFor("two heartbeats", () => r.beats >= 2);
    await r.cancel();
    await reading;
    expect(r.beats).toBeGreaterThanOrEqual(2);
  });

  test("the access token in the URL of an event stream is refused, naming access_token; a bad Last-Event-ID too", async () => {
    const { token, id } = await conversation("sse-4");
    const inUrl = await fetch(watchUrl(id, { access_token: token }), { headers: { accept: "text/event-stream" } });
    expect(inUrl.status).toBe(400);
    expect((await inUrl.json()).message).toMatch(/^access_token: .*Authorization header/);
    const bad = await fetch(watchUrl(id), {
      headers: { accept: "text/event-stream", "last-event-id": "not-a-cursor", ...bearer(token) },
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).message).toMatch(/^Last-Event-ID: /);
    // Without Accept: text/event-stream the route is NDJSON, as before (the frame's token may be in its query).
    const plain = await fetch(watchUrl(id, { access_token: token }));
    expect(plain.headers.get("content-type")).toBe("application/x-ndjson");
    await plain.body?.cancel();
  });

  test("another account's customer cannot watch the conversation as events either: refused as on NDJSON", async () => {
    const { id } = await conversation("sse-5");
    const other = (await issueTokens(fx.s.url, fx.b, "sse-5")).access_token;
    const ndjson = await fetch(watchUrl(id, { access_token: other }));
    const events = await fetch(watchUrl(id), { headers: { accept: "text/event-stream", ...bearer(other) } });
    expect(events.status).toBeGreaterThanOrEqual(400);
    expect(events.status).toBe(ndjson.status);
    expect(events.headers.get("content-type")).toContain("application/json");
    expect((await events.json()).code).toBe((await ndjson.json()).code);
  });
});
