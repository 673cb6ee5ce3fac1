import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, reasonOf, requestJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson, streamEnd } from "../helpers/ndjson.js";
import { startServer, type TestServer } from "../helpers/server.js";

// One revocation model (docs/security.md): a credential is valid only while every credential it descends from is,
// at the next unary call and on every stream already open. Runs on SQLite and on PostgreSQL (api-postgres).

const fx = serverForFile({
  server: { overrides: { extraRoutes: consoleAndFrameRoutes } },
  idTokens: true,
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const CSRF = { "x-aiagent-csrf": "1", "sec-fetch-site": "same-origin" };

function watchConversation(token: string, conversationId: string): Promise<NdjsonReader> {
  const q = new URLSearchParams({ conversation_id: conversationId, after_message_order: "2", access_token: token });
  return openNdjson(`${fx.s.url}/watch_conversation?${q}`);
}

function watchAccount(email: string, headers: Record<string, string>): Promise<NdjsonReader> {
  return openNdjson(`${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: email })}`, headers);
}

async function signInCookie(email: string, password: string): Promise<string> {
  const r = await fetch(`${fx.s.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...CSRF },
    body: JSON.stringify({ email, password }),
  });
  expect(r.status).toBe(204);
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

describe("a revoked credential ends its open streams within a second, with a typed error", () => {
  test("a customer's session revoked: watch_conversation ends (unauthenticated, TokenRevokedError)", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "rv-customer");
    const conv = await send(fx.s.url, t.access_token, "my card is 4111");
    const watch = await watchConversation(t.access_token, conv.conversation_id);
    expect((await watch.next())?.result?.conversation).toBeDefined();
    const sessions = await getJson(fx.s.url, "/v1/account/sessions", { user_id: "rv-customer" }, bearer(fx.idA));
    const sessionId = sessions.body.data.sessions[0].session_id as string;
    const revoked = await postJson(fx.s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, bearer(fx.idA));
    expect(revoked.status).toBe(200);
    // The operator's next reply must not reach the revoked customer's stream.
    const reply = postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: conv.conversation_id, content: "operator reply after revocation" },
      bearer(fx.idA),
    );
    const end = await streamEnd(watch);
    await reply;
    expect(end.error).toMatchObject({ code: "unauthenticated" });
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");
    expect(end.seen.some((l) => l.result?.message?.content === "operator reply after revocation")).toBe(false);
  });

  test("a member removed: their watch_account ends, and the customer's next message is not delivered to it", async () => {
    const m = await addMember(fx.s.url, fx.idA, `rv-member-${Date.now()}@shop.example`);
    const watch = await watchAccount(m.email, bearer(m.idToken));
    expect((await watch.next())?.result?.subscribed_at).toBeDefined();
    const removed = await requestJson(fx.s.url, "DELETE", `/v1/account/members/${m.memberId}`, bearer(fx.idA));
    expect(removed.status).toBe(200);
    const t = await issueTokens(fx.s.url, fx.a, "rv-after-removal");
    const sent = send(fx.s.url, t.access_token, "customer PII after member removal: card 4111");
    const end = await streamEnd(watch);
    await sent;
    expect(end.error?.code).toBe("unauthenticated");
    expect(JSON.stringify(end.seen)).not.toContain("card 4111");
    // And at the next unary call.
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(m.idToken))).status).toBe(401);
  });

  test("an API key revoked: the ID token minted with it is refused, mints no key, and its stream ends", async () => {
    const b = await fx.s.account();
    const ownerToken = await idToken(fx.s.url, b);
    const k = await postJson(fx.s.url, "/v1/account/api_keys", { name: "to be stolen" }, bearer(ownerToken));
    expect(k.status).toBe(200);
    const stolen = k.body.data.client_api_key as string;
    const minted = await postJson(fx.s.url, "/get_id_token", { user_email_id: b.email, client_api_key: stolen });
    const mintedToken = minted.body.data.idToken as string;
    const watch = await watchAccount(b.email, bearer(mintedToken));
    expect((await watch.next())?.result?.subscribed_at).toBeDefined();

    const revoke = await postJson(
      fx.s.url,
      `/v1/account/api_keys/${k.body.data.api_key.api_key_id}/revoke`,
      {},
      bearer(ownerToken),
    );
    expect(revoke.status).toBe(200);
    const end = await streamEnd(watch);
    expect(end.error?.code).toBe("unauthenticated");
    expect(reasonOf(end.error!)).toBe("TokenRevokedError");

    const list = await getJson(fx.s.url, "/v1/account/api_keys", {}, bearer(mintedToken));
    expect(list.status).toBe(401);
    expect(reasonOf(list.body)).toBe("TokenRevokedError");
    expect((await postJson(fx.s.url, "/v1/account/api_keys", { name: "mine now" }, bearer(mintedToken))).status).toBe(
      401,
    );
    // The token minted with the account's other key lives on.
    expect((await getJson(fx.s.url, "/v1/account/api_keys", {}, bearer(ownerToken))).status).toBe(200);
  });
});

describe("the console's session and the person's password", () => {
  test("signing out revokes the cookie's token: the old value is refused as a cookie and as a bearer token", async () => {
    const cookie = await signInCookie(fx.a.email, fx.a.password);
    const token = cookie.slice(cookie.indexOf("=") + 1);
    expect((await getJson(fx.s.url, "/v1/account", {}, { cookie, ...CSRF })).status).toBe(200);
    const watch = await watchAccount(fx.a.email, { cookie, ...CSRF });
    expect((await watch.next())?.result?.subscribed_at).toBeDefined();

    const out = await fetch(`${fx.s.url}/console/session`, { method: "DELETE", headers: { cookie, ...CSRF } });
    expect(out.status).toBe(204);
    expect((await streamEnd(watch)).error?.code).toBe("unauthenticated");
    expect((await getJson(fx.s.url, "/v1/account", {}, { cookie, ...CSRF })).status).toBe(401);
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(token))).status).toBe(401);
    // Another session of the same person is not signed out.
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(fx.idA))).status).toBe(200);
  });

  test("a password change revokes the person's other password sessions; the one that made it lives on", async () => {
    const c = await fx.s.account();
    const elsewhere = await postJson(fx.s.url, "/get_id_token", { user_email_id: c.email, password: c.password });
    const old = elsewhere.body.data.idToken as string;
    const viaKey = await idToken(fx.s.url, c);
    const cookie = await signInCookie(c.email, c.password);
    const watch = await watchAccount(c.email, bearer(old));
    expect((await watch.next())?.result?.subscribed_at).toBeDefined();

    const changed = await postJson(
      fx.s.url,
      "/v1/account/password",
      { current_password: c.password, new_password: "a brand new passphrase" },
      { cookie, ...CSRF },
    );
    expect(changed.status).toBe(200);
    expect((await streamEnd(watch)).error?.code).toBe("unauthenticated");
    const refused = await getJson(fx.s.url, "/v1/account", {}, bearer(old));
    expect(refused.status).toBe(401);
    expect(reasonOf(refused.body)).toBe("TokenRevokedError");
    expect((await getJson(fx.s.url, "/v1/account", {}, { cookie, ...CSRF })).status).toBe(200);
    // A server's token from the API key is not a password session: it lives on.
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(viaKey))).status).toBe(200);

    // A second change, made elsewhere, ends the session the first one kept.
    const fresh = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: c.email,
      password: "a brand new passphrase",
    });
    const again = await postJson(
      fx.s.url,
      "/v1/account/password",
      { current_password: "a brand new passphrase", new_password: "and yet another one" },
      bearer(fresh.body.data.idToken),
    );
    expect(again.status).toBe(200);
    expect((await getJson(fx.s.url, "/v1/account", {}, { cookie, ...CSRF })).status).toBe(401);
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(fresh.body.data.idToken))).status).toBe(200);
  });
});

describe("a password reset link issued by an admin", () => {
  test("works once; the old password works until it is used, then its ID tokens stop", async () => {
    const m = await addMember(fx.s.url, fx.idA, `rv-reset-${Date.now()}@shop.example`);
    const link = await postJson(fx.s.url, `/v1/account/members/${m.memberId}/password_reset`, {}, bearer(fx.idA));
    expect(link.status).toBe(200);
    expect(link.body.data.invitation_url).toContain("/console/invitation#code=inv_");
    // Issuing a link locks nobody out.
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(m.idToken))).status).toBe(200);
    const code = link.body.data.invitation_code as string;
    const used = await postJson(fx.s.url, "/v1/invitations/accept", {
      invitation_code: code,
      password: "a new one, long",
    });
    expect(used.status).toBe(200);
    expect(
      (await postJson(fx.s.url, "/v1/invitations/accept", { invitation_code: code, password: "again, long" })).status,
    ).toBe(401);
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(m.idToken))).status).toBe(401);
    const signIn = (password: string) => postJson(fx.s.url, "/get_id_token", { user_email_id: m.email, password });
    expect((await signIn(m.password)).status).toBe(401);
    expect((await signIn("a new one, long")).status).toBe(200);
    // An admin resets others' passwords, not their own, and not the owner's.
    const own = await postJson(fx.s.url, `/v1/account/members/${fx.a.accountId}/password_reset`, {}, bearer(fx.idA));
    expect(own.status).toBe(403);
  });
});

describe("fair limits: one account at its cap of watch streams leaves the others theirs", () => {
  let f: TestServer;
  beforeAll(async () => {
    f = await startServer({ env: { AIAGENT_WATCH_STREAMS_PER_ACCOUNT: "6", AIAGENT_WATCH_STREAMS: "20" } });
  });
  afterAll(() => f?.close(true));

  test("account A opens streams until refused; account B's console and frame streams open and receive", async () => {
    const [greedy, other] = await Promise.all([f.account(), f.account()]);
    const open: NdjsonReader[] = [];
    let refused: NdjsonReader | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      // Four per token: a new ID token every four streams, as the tester did.
      const token = await idToken(f.url, greedy);
      for (let j = 0; j < 4 && !refused; j++) {
        const r = await openNdjson(
          `${f.url}/watch_account?${new URLSearchParams({ user_email_id: greedy.email })}`,
          bearer(token),
        );
        if (r.response.status === 200) open.push(r);
        else refused = r;
      }
    }
    expect(open.length).toBe(6);
    expect(refused?.response.status).toBe(429);
    expect(((await refused!.next()) as { message?: string }).message).toContain("this account");

    const console = await openNdjson(
      `${f.url}/watch_account?${new URLSearchParams({ user_email_id: other.email })}`,
      bearer(await idToken(f.url, other)),
    );
    expect(console.response.status).toBe(200);
    expect((await console.next())?.result?.subscribed_at).toBeDefined();
    const t = await issueTokens(f.url, other, "fair-customer");
    const conv = await send(f.url, t.access_token, "hello");
    const frame = await openNdjson(
      `${f.url}/watch_conversation?${new URLSearchParams({ conversation_id: conv.conversation_id, after_message_order: "2", access_token: t.access_token })}`,
    );
    expect(frame.response.status).toBe(200);
    expect((await frame.next())?.result?.conversation).toBeDefined();
    await send(f.url, t.access_token, "still served", conv.conversation_id);
    expect((await frame.next())?.result?.message).toMatchObject({ content: "still served" });
    const seenByConsole: string[] = [];
    for (let i = 0; i < 10 && !seenByConsole.includes("still served"); i++) {
      const l = await console.next();
      if (l?.result?.message) seenByConsole.push(l.result.message.content);
    }
    expect(seenByConsole).toContain("still served");
    await Promise.all([...open, console, frame].map((r) => r.cancel()));
  });
});
