import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, reasonOf, requestJson } from "../helpers/http.js";
import { type NdjsonReader, openEventStream, openNdjson, streamEnd } from "../helpers/ndjson.js";

// Revocation is pushed to open streams, not polled (docs/live-updates.md, "Revocation reaches open streams"). The
// safety-net sweep is set to a minute here: a stream that ends within the second ended because it was told. And with
// the sweep at its default, a notification dropped on purpose is made up for by it. SQLite and PostgreSQL.

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

function watchConversation(url: string, token: string, conversationId: string): Promise<NdjsonReader> {
  const q = new URLSearchParams({ conversation_id: conversationId, after_message_order: "2", access_token: token });
  return openNdjson(`${url}/watch_conversation?${q}`);
}

async function sessionOf(url: string, admin: string, userId: string): Promise<string> {
  const sessions = await getJson(url, "/v1/account/sessions", { user_id: userId }, bearer(admin));
  return sessions.body.data.sessions[0].session_id as string;
}

describe("pushed: with the sweep a minute apart, revocations still end their streams within a second", () => {
  const fx = serverForFile({ server: { env: { AIAGENT_STREAM_RECHECK_MS: "60000" } }, idTokens: true });

  test("a session revoked: its stream ends, the reply written after it is not delivered, the others go on", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "push-1");
    const other = await issueTokens(fx.s.url, fx.a, "push-1-other");
    const conv = await send(fx.s.url, t.access_token, "hello");
    const otherConv = await send(fx.s.url, other.access_token, "hello too");
    const watch = await watchConversation(fx.s.url, t.access_token, conv.conversation_id);
    const bystander = await watchConversation(fx.s.url, other.access_token, otherConv.conversation_id);
    expect((await watch.next())?.result?.conversation).toBeDefined();
    expect((await bystander.next())?.result?.conversation).toBeDefined();
    const sessionId = await sessionOf(fx.s.url, fx.idA, "push-1");
    expect((await postJson(fx.s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, bearer(fx.idA))).status).toBe(200);
    const reply = postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: conv.conversation_id, content: "written after the revocation" },
      bearer(fx.idA),
    );
    const end = await streamEnd(watch);
    await reply;
    expect(end.error?.code).toBe("unauthenticated");
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");
    expect(JSON.stringify(end.seen)).not.toContain("written after the revocation");
    // The other customer's stream was not touched: it receives its own reply.
    await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: otherConv.conversation_id, content: "for the bystander" },
      bearer(fx.idA),
    );
    let got: string | undefined;
    for (let i = 0; i < 5 && got !== "for the bystander"; i++) got = (await bystander.next())?.result?.message?.content;
    expect(got).toBe("for the bystander");
    await bystander.cancel();
  });

  test("a server-sent events stream (Accept: text/event-stream) of a revoked session ends too, with an error event", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "push-sse");
    const conv = await send(fx.s.url, t.access_token, "hello");
    const q = new URLSearchParams({ conversation_id: conv.conversation_id, after_message_order: "2" });
    const watch = await openEventStream(`${fx.s.url}/watch_conversation?${q}`, bearer(t.access_token));
    expect(watch.response.headers.get("content-type")).toBe("text/event-stream");
    expect((await watch.next())?.result?.conversation).toBeDefined();
    const sessionId = await sessionOf(fx.s.url, fx.idA, "push-sse");
    expect((await postJson(fx.s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, bearer(fx.idA))).status).toBe(200);
    await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: conv.conversation_id, content: "written after the revocation" },
      bearer(fx.idA),
    );
    const end = await streamEnd(watch);
    expect(end.error?.code).toBe("unauthenticated");
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");
    expect(JSON.stringify(end.seen)).not.toContain("written after the revocation");
  });

  test("a member removed and a chatbot disabled: their streams end", async () => {
    const m = await addMember(fx.s.url, fx.idA, `push-member-${Date.now()}@shop.example`);
    const inbox = await openNdjson(
      `${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: m.email })}`,
      bearer(m.idToken),
    );
    expect((await inbox.next())?.result?.subscribed_at).toBeDefined();
    expect((await requestJson(fx.s.url, "DELETE", `/v1/account/members/${m.memberId}`, bearer(fx.idA))).status).toBe(
      200,
    );
    expect((await streamEnd(inbox)).error?.code).toBe("unauthenticated");

    const b = await fx.s.account();
    const t = await issueTokens(fx.s.url, b, "push-bot");
    const conv = await send(fx.s.url, t.access_token, "hello");
    const watch = await watchConversation(fx.s.url, t.access_token, conv.conversation_id);
    expect((await watch.next())?.result?.conversation).toBeDefined();
    const owner = await idToken(fx.s.url, b);
    const disabled = await postJson(fx.s.url, `/v1/account/chatbots/${b.chatbotId}/disable`, {}, bearer(owner));
    expect(disabled.status).toBe(200);
    expect((await streamEnd(watch)).error?.code).toBe("unauthenticated");
  });

  test("a retired refresh token presented again: the refusal ends the session, and its open stream with it", async () => {
    const c = await fx.s.account();
    const owner = await idToken(fx.s.url, c);
    const policy = { rotate_refresh_tokens: true, reuse_grace_seconds: 0 };
    const set = await postJson(fx.s.url, `/v1/account/chatbots/${c.chatbotId}/session_policy`, policy, bearer(owner));
    expect(set.status).toBe(200);
    const user = "push-reuse";
    const t = await issueTokens(fx.s.url, c, user);
    const refresh = (token: string) =>
      postJson(fx.s.url, "/ai_agent/refresh_token", { user_id: user, chatbot_id: c.chatbotId, refresh_token: token });
    const first = await refresh(t.refresh_token);
    expect(first.status).toBe(200);
    const second = await refresh(first.body.data.refresh_token);
    expect(second.status).toBe(200);
    const conv = await send(fx.s.url, second.body.data.access_token, "hello");
    const watch = await watchConversation(fx.s.url, second.body.data.access_token, conv.conversation_id);
    expect((await watch.next())?.result?.conversation).toBeDefined();
    // The first refresh token, retired twice over: presenting it again may mean it was stolen; the session ends.
    expect((await refresh(t.refresh_token)).status).toBe(401);
    const end = await streamEnd(watch);
    expect(end.error?.code).toBe("unauthenticated");
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");
  });
});

describe("the safety net: a notification dropped on purpose, the sweep at its default still ends the stream", () => {
  const fx = serverForFile({ idTokens: true });

  test("the revoking call's own notice is dropped: the idle stream is ended by the sweep", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "dropped-1");
    const conv = await send(fx.s.url, t.access_token, "hello");
    const watch = await watchConversation(fx.s.url, t.access_token, conv.conversation_id);
    expect((await watch.next())?.result?.conversation).toBeDefined();
    // Every notice is lost: the revoking call's own, and on PostgreSQL the NOTIFY this instance hears.
    fx.s.app.streams.dropTold = true;
    const sessionId = await sessionOf(fx.s.url, fx.idA, "dropped-1");
    expect((await postJson(fx.s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, bearer(fx.idA))).status).toBe(200);
    // Nothing is written meanwhile (a delivery would read the change log itself): only the sweep can end it.
    const end = await streamEnd(watch, 3000).finally(() => {
      fx.s.app.streams.dropTold = false;
    });
    expect(end.error?.code).toBe("unauthenticated");
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");
  });
});
