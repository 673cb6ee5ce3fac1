import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson, type StreamLine } from "../helpers/ndjson.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer } from "../helpers/server.js";

const fx = serverForFile({ accounts: 2, idTokens: true });

function watchUrl(base: string, q: Record<string, string | number>): string {
  return `${base}/watch_conversation?${new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]))}`;
}

async function nextResult(r: NdjsonReader): Promise<any> {
  const line = await r.next();
  if (!line?.result) throw new Error(`expected an event, got ${JSON.stringify(line)}`);
  return line.result;
}

describe("watching a conversation", () => {
  test("the frame's stream sends the state, the messages after the given order, then each change live, once", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "w-1");
    const c = await send(fx.s.url, t.access_token, "hello");
    const id = c.conversation_id;

    // Resuming after message 1: only the agent's reply (2) is sent again.
    const r = await openNdjson(
      watchUrl(fx.s.url, { conversation_id: id, after_message_order: 1, access_token: t.access_token }),
    );
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get("content-type")).toBe("application/x-ndjson");
    const state = await nextResult(r);
    expect(state.conversation).toMatchObject({ conversation_id: id, status: "live", assigned_to: "ai_agent" });
    const replay = await nextResult(r);
    expect(replay.message).toMatchObject({ message_order: 2, role: "assistant" });

    // The operator takes over, replies: the watcher sees both at once, without asking again.
    const auth = { authorization: `Bearer ${fx.idA}` };
    await postJson(fx.s.url, "/take_over_conversation", { conversation_id: id, operator_name: "Sam" }, auth);
    const joined = await nextResult(r);
    expect(joined.conversation).toMatchObject({ assigned_to: fx.a.email, operator_name: "Sam" });
    await postJson(fx.s.url, "/reply_to_conversation", { conversation_id: id, content: "Hi, Sam here." }, auth);
    const reply = await nextResult(r);
    expect(reply.message).toMatchObject({ message_order: 3, role: "operator", content: "Hi, Sam here." });

    // The customer's own message comes through too (another tab sees it); no agent reply while Sam holds it.
    await send(fx.s.url, t.access_token, "thanks", id);
    expect((await nextResult(r)).message).toMatchObject({ message_order: 4, role: "user" });

    await postJson(fx.s.url, "/release_conversation", { conversation_id: id }, auth);
    expect((await nextResult(r)).conversation).toMatchObject({ assigned_to: "ai_agent", operator_name: "" });
    await r.cancel();
  });

  test("the account watches with its ID token over Connect; other accounts and users get not_found", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "w-2");
    const id = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const { conversations } = rpcClients(fx.s.url, "connect-json");
    const abort = new AbortController();
    const stream = conversations.watchConversation(
      { conversationId: id },
      { headers: { authorization: `Bearer ${fx.idA}` }, signal: abort.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value?.event.case).toBe("conversation");
    expect((await it.next()).value?.event.value).toMatchObject({ messageOrder: 1, content: "hello" });
    expect((await it.next()).value?.event.value).toMatchObject({ messageOrder: 2, role: "assistant" });
    await send(fx.s.url, t.access_token, "more", id);
    expect((await it.next()).value?.event.value).toMatchObject({ messageOrder: 3, content: "more" });
    abort.abort();

    const refused = async (headers: Record<string, string>, accessToken = "") => {
      try {
        for await (const _ of conversations.watchConversation({ conversationId: id, accessToken }, { headers }))
          return "answered";
      } catch (e) {
        return ConnectError.from(e).code;
      }
      return "ended";
    };
    expect(await refused({ authorization: `Bearer ${fx.idB}` })).toBe(Code.NotFound);
    const otherUser = await issueTokens(fx.s.url, fx.a, "w-other");
    expect(await refused({}, otherUser.access_token)).toBe(Code.NotFound);
    const otherAccount = await issueTokens(fx.s.url, fx.b, "w-2");
    expect(await refused({}, otherAccount.access_token)).toBe(Code.NotFound);
    expect(await refused({})).toBe(Code.Unauthenticated);

    const bad = await fetch(
      watchUrl(fx.s.url, { conversation_id: id, after_message_order: -1, access_token: t.access_token }),
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toContain("after_message_order");
  });

  test("a write that lands while the stream subscribes is sent once: neither lost nor repeated", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "w-race");
    const id = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    // The write lands exactly at subscription time: after the stream has subscribed and taken the log's place, before
    // it reads the conversation's messages. The catch-up read then carries it, and so does the log after that place.
    const events = fx.s.app.store.events;
    const lastSeq = events.lastSeq;
    let landed: Promise<unknown> | undefined;
    events.lastSeq = async (accountId) => {
      const place = await lastSeq(accountId);
      if (accountId === fx.a.accountId && !landed) {
        landed = send(fx.s.url, t.access_token, "at subscription time", id);
        await landed;
      }
      return place;
    };
    let r: NdjsonReader;
    try {
      r = await openNdjson(
        watchUrl(fx.s.url, { conversation_id: id, after_message_order: 2, access_token: t.access_token }),
      );
      expect((await nextResult(r)).conversation.conversation_id).toBe(id);
    } finally {
      events.lastSeq = lastSeq;
    }
    expect(landed, "the write was made while the stream subscribed").toBeDefined();
    // A later write: everything before it has been sent by the time it arrives (one stream, in order).
    await send(fx.s.url, t.access_token, "after", id);
    const orders: number[] = [];
    while (orders.at(-1) !== 6) orders.push((await nextResult(r)).message.message_order);
    expect(orders).toEqual([3, 4, 5, 6]);
    await r.cancel();
  });

  test("streams are bounded per token; closing one frees its slot", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "w-3");
    const id = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const url = watchUrl(fx.s.url, { conversation_id: id, after_message_order: 2, access_token: t.access_token });
    const open: NdjsonReader[] = [];
    for (let i = 0; i < fx.s.app.config.watchStreams.perToken; i++) {
      const r = await openNdjson(url);
      await nextResult(r);
      open.push(r);
    }
    const over = await fetch(url);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { message: string }).message).toContain("watch streams");
    // Another token of the same customer is counted apart.
    const t2 = await issueTokens(fx.s.url, fx.a, "w-3");
    const other = await openNdjson(watchUrl(fx.s.url, { conversation_id: id, access_token: t2.access_token }));
    expect((await nextResult(other)).conversation.conversation_id).toBe(id);
    await other.cancel();

    await open.pop()!.cancel();
    // The server frees the slot when it sees the client gone; a new stream is then admitted.
    let again: Response | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      if (again) await new Promise((r) => setTimeout(r, 20));
      again = await fetch(url);
      if (again.status !== 200) await again.body?.cancel();
    }
    expect(again?.status).toBe(200);
    await again?.body?.cancel();
    for (const r of open) await r.cancel();
  });
});

describe("watching an account (a live inbox)", () => {
  test("the account's stream says when it is subscribed, then carries every conversation's changes; none of another account", async () => {
    const r = await openNdjson(`${fx.s.url}/watch_account?user_email_id=${encodeURIComponent(fx.a.email)}`, {
      authorization: `Bearer ${fx.idA}`,
    });
    expect(r.response.status).toBe(200);
    expect((await nextResult(r)).subscribed_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);

    // Another account's customer writes: nothing arrives here. Then this account's customers write.
    const foreign = await issueTokens(fx.s.url, fx.b, "inbox-foreign");
    await send(fx.s.url, foreign.access_token, "not yours");
    const t1 = await issueTokens(fx.s.url, fx.a, "inbox-1");
    const c1 = (await send(fx.s.url, t1.access_token, "first customer")).conversation_id;
    const m1 = (await nextResult(r)).message;
    expect(m1).toMatchObject({ conversation_id: c1, content: "first customer", role: "user" });
    expect((await nextResult(r)).message).toMatchObject({ conversation_id: c1, role: "assistant" });
    await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: c1, operator_name: "Sam" },
      {
        authorization: `Bearer ${fx.idA}`,
      },
    );
    expect((await nextResult(r)).conversation).toMatchObject({ conversation_id: c1, operator_name: "Sam" });
    await r.cancel();

    // Another account's e-mail: permission_denied; an access token is not an ID token.
    const other = await fetch(`${fx.s.url}/watch_account?user_email_id=${encodeURIComponent(fx.b.email)}`, {
      headers: { authorization: `Bearer ${fx.idA}` },
    });
    expect(other.status).toBe(403);
    const frame = await fetch(`${fx.s.url}/watch_account?user_email_id=${encodeURIComponent(fx.a.email)}`, {
      headers: { authorization: `Bearer ${t1.access_token}` },
    });
    expect(frame.status).toBe(401);

    // Over gRPC too.
    const { conversations } = rpcClients(fx.s.url, "grpc");
    const abort = new AbortController();
    const it = conversations
      .watchAccount(
        { userEmailId: fx.a.email },
        { headers: { authorization: `Bearer ${fx.idA}` }, signal: abort.signal },
      )
      [Symbol.asyncIterator]();
    expect((await it.next()).value?.event.case).toBe("subscribedAt");
    await send(fx.s.url, t1.access_token, "over grpc", c1);
    expect((await it.next()).value?.event.value).toMatchObject({ conversationId: c1, content: "over grpc" });
    abort.abort();
  });
});

describe("watch streams and the server's life", () => {
  test("an idle gRPC watch outlives the HTTP/2 silence and idle timeouts; the instance bound holds", async () => {
    const quick = await startServer({
      env: { AIAGENT_REQUEST_TIMEOUT_MS: "300", AIAGENT_H2_IDLE_TIMEOUT_MS: "300", AIAGENT_WATCH_STREAMS: "2" },
    });
    try {
      const acc = await quick.account();
      const id = await idToken(quick.url, acc);
      const t = await issueTokens(quick.url, acc, "w-idle");
      const conv = (await send(quick.url, t.access_token, "hello")).conversation_id;
      const { conversations } = rpcClients(quick.url, "grpc");
      const abort = new AbortController();
      const it = conversations
        .watchConversation(
          { conversationId: conv, afterMessageOrder: 2 },
          { headers: { authorization: `Bearer ${id}` }, signal: abort.signal },
        )
        [Symbol.asyncIterator]();
      expect((await it.next()).value?.event.case).toBe("conversation");
      // Silent for several times both timeouts.
      await new Promise((r) => setTimeout(r, 1200));
      await send(quick.url, t.access_token, "still there?", conv);
      expect((await it.next()).value?.event.value).toMatchObject({ messageOrder: 3, content: "still there?" });

      // Two streams are open (with the next one); a third, whatever its token, waits for a free slot.
      const second = await openNdjson(watchUrl(quick.url, { conversation_id: conv, access_token: t.access_token }));
      await nextResult(second);
      const t2 = await issueTokens(quick.url, acc, "w-idle-2");
      const third = await fetch(watchUrl(quick.url, { conversation_id: conv, access_token: t2.access_token }));
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBe("5");
      await third.body?.cancel();
      await second.cancel();
      abort.abort();
    } finally {
      await quick.close(true);
    }
  });

  test("a stream ends with TokenExpiredError when its token expires", async () => {
    const short = await startServer({ env: { AIAGENT_ACCESS_TOKEN_TTL: "1" } });
    try {
      // The service's clock stands still, so the token is valid however slow the machine is until the stream's own
      // timer, set at open for the token's remaining second, ends it.
      short.clock.freezeAt(Date.now());
      const acc = await short.account();
      const t = await issueTokens(short.url, acc, "w-exp");
      const id = (await send(short.url, t.access_token, "hello")).conversation_id;
      const r = await openNdjson(
        watchUrl(short.url, { conversation_id: id, after_message_order: 2, access_token: t.access_token }),
      );
      await nextResult(r);
      const last = (await r.next()) as StreamLine;
      expect(last.error?.code).toBe("unauthenticated");
      expect(last.error?.details?.[0]?.debug?.reason).toBe("TokenExpiredError");
      expect(await r.next()).toBeNull();
    } finally {
      await short.close(true);
    }
  });

  test("a stream cut by a server restart resumes from its last message_order without losing or repeating a message", async () => {
    const first = await startServer();
    const acc = await first.account();
    const port = first.server.port;
    const dir = first.dir;
    const t = await issueTokens(first.url, acc, "w-restart");
    const id = (await send(first.url, t.access_token, "before the restart")).conversation_id;

    const seen: number[] = [];
    const r1 = await openNdjson(watchUrl(first.url, { conversation_id: id, access_token: t.access_token }));
    await nextResult(r1);
    seen.push((await nextResult(r1)).message.message_order, (await nextResult(r1)).message.message_order);

    // Shutdown ends the watch streams cleanly instead of holding the server for its grace period.
    await first.close();
    expect(await r1.next()).toBeNull();

    const second = await startServer({ dir, env: { AIAGENT_PORT: String(port) } });
    try {
      // Written while the watcher was away. The first calls may meet keep-alive connections of the old server that
      // the client has not yet seen closed (the earlier calls', and the stream's own, which the shutdown ended
      // cleanly): it retries on each, as any client does after a restart.
      const retried = (attempt: number): Promise<unknown> =>
        send(second.url, t.access_token, "while away", id).catch((e: unknown) =>
          attempt < 3 ? retried(attempt + 1) : Promise.reject(e),
        );
      await retried(1);
      const r2 = await openNdjson(
        watchUrl(second.url, { conversation_id: id, after_message_order: seen.at(-1)!, access_token: t.access_token }),
      );
      await nextResult(r2);
      seen.push((await nextResult(r2)).message.message_order, (await nextResult(r2)).message.message_order);
      await send(second.url, t.access_token, "live again", id);
      seen.push((await nextResult(r2)).message.message_order, (await nextResult(r2)).message.message_order);
      expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
      await r2.cancel();
    } finally {
      await second.close(true);
    }
  });
});
