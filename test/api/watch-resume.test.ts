import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";

// Each streamed event carries a cursor; a watch opened again with the last one receives exactly what it missed.
const fx = serverForFile({ accounts: 2, idTokens: true });

const inbox = (token: string, email: string, afterCursor = "") =>
  openNdjson(
    `${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: email, ...(afterCursor ? { after_cursor: afterCursor } : {}) })}`,
    { authorization: `Bearer ${token}` },
  );

async function take(r: NdjsonReader, n: number): Promise<any[]> {
  const out: any[] = [];
  while (out.length < n) {
    const line = await r.next();
    if (!line?.result) throw new Error(`expected an event, got ${JSON.stringify(line)}`);
    out.push(line.result);
  }
  return out;
}

describe("resuming a watch from its cursor", () => {
  test("WatchAccount: what was written while away comes first, once, in order; then the live changes", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "resume-1");
    const first = await inbox(fx.idA, fx.a.email);
    const [subscribed] = await take(first, 1);
    expect(subscribed.subscribed_at).toBeDefined();
    expect(subscribed.cursor).toMatch(/^\d+$/);
    const c = await send(fx.s.url, t.access_token, "one");
    const seen = await take(first, 2);
    expect(seen.map((e) => e.message?.content)).toEqual(["one", expect.any(String)]);
    await first.cancel();

    // Away: a message and its answer, a take-over and a reply.
    await send(fx.s.url, t.access_token, "two", c.conversation_id);
    const auth = { authorization: `Bearer ${fx.idA}` };
    await postJson(fx.s.url, "/take_over_conversation", { conversation_id: c.conversation_id }, auth);
    await postJson(fx.s.url, "/reply_to_conversation", { conversation_id: c.conversation_id, content: "three" }, auth);

    const again = await inbox(fx.idA, fx.a.email, seen[1].cursor);
    const [, ...missed] = await take(again, 5);
    expect(missed.map((e) => e.message?.message_order ?? e.conversation?.assigned_to)).toEqual([3, 4, fx.a.email, 5]);
    const cursors = missed.map((e) => Number(e.cursor));
    expect(cursors).toEqual([...cursors].sort((x, y) => x - y));
    expect(new Set(cursors).size).toBe(cursors.length);
    // Then live, without repeating anything.
    await postJson(fx.s.url, "/reply_to_conversation", { conversation_id: c.conversation_id, content: "four" }, auth);
    const [live] = await take(again, 1);
    expect(live.message).toMatchObject({ content: "four", message_order: 6 });
    await again.cancel();
  });

  test("WatchConversation: after_cursor resumes like after_message_order", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "resume-2");
    const c = await send(fx.s.url, t.access_token, "hello");
    const q = (cursor: string) =>
      `${fx.s.url}/watch_conversation?${new URLSearchParams({ conversation_id: c.conversation_id, access_token: t.access_token, after_cursor: cursor })}`;
    const r = await openNdjson(q("1"));
    const [state, reply] = await take(r, 2);
    expect(state.conversation).toBeDefined();
    expect(reply.message.message_order).toBe(2);
    expect(reply.cursor).toBe("2");
    await r.cancel();
  });

  test.each([
    ["not digits", "abc"],
    ["negative", "-1"],
    ["huge", "99999999999"],
  ])("a cursor that is %s is refused 400 naming after_cursor", async (_, cursor) => {
    const r = await getJson(
      fx.s.url,
      "/watch_account",
      { user_email_id: fx.a.email, after_cursor: cursor },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/after_cursor/);
  });

  test("a cursor is a place in the caller's own log: resuming never shows another account's events", async () => {
    const tb = await issueTokens(fx.s.url, fx.b, "resume-b");
    for (let i = 0; i < 3; i++) await send(fx.s.url, tb.access_token, `b ${i}`);
    const bStream = await inbox(fx.idB, fx.b.email);
    const [bNow] = await take(bStream, 1);
    await bStream.cancel();
    // B's cursor is beyond A's log, or within it: A gets its own events only, never B's.
    const r = await inbox(fx.idA, fx.a.email, "1");
    const events = await take(r, 3);
    await r.cancel();
    for (const e of events.slice(1)) expect(JSON.stringify(e)).not.toContain("b 0");
    expect(Number(bNow.cursor)).toBeGreaterThan(0);
  });
});
