import { describe, expect, it } from "vitest";
import { hashSecret } from "../../src/domain/ids.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken } from "../helpers/flows.js";
import { postJson, reasonOf } from "../helpers/http.js";

const fx = serverForFile();

describe("POST /ai_agent/get_access_token", () => {
  it("returns exactly the documented token set, with integer millisecond expiries", async () => {
    const before = Date.now();
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "customer-1",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["data"]);
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual([
      "access_token",
      "access_token_expires_at",
      "refresh_token",
      "refresh_token_expires_at",
    ]);
    expect(Number.isInteger(d.access_token_expires_at)).toBe(true);
    expect(Number.isInteger(d.refresh_token_expires_at)).toBe(true);
    expect(d.access_token_expires_at).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);
    expect(d.access_token_expires_at).toBeLessThanOrEqual(Date.now() + 15 * 60_000);
    expect(d.refresh_token_expires_at).toBeGreaterThan(before + 29 * 24 * 3600_000);
    expect(d.refresh_token).toMatch(/^rt_[A-Za-z0-9_-]{43}$/);
    expect(d.access_token.split(".")).toHaveLength(3);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  it("names a session whose id begins with its issue instant (uuid v7), so new sessions sort last", async () => {
    const sessions: { sid: string; ims: number; before: number }[] = [];
    for (const user of ["customer-2", "customer-3"]) {
      const before = Date.now();
      const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
        user_id: user,
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
      });
      expect(r.status).toBe(200);
      const claims = JSON.parse(Buffer.from(r.body.data.access_token.split(".")[1], "base64url").toString("utf8"));
      sessions.push({ sid: claims.sid, ims: claims.ims, before });
    }
    const instant = (sid: string) => Number.parseInt(sid.replace("-", "").slice(0, 12), 16);
    for (const { sid, ims, before } of sessions) {
      expect(sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      // The session begins once the key is read, a moment before its first access token is signed (`ims`).
      expect(instant(sid)).toBeGreaterThanOrEqual(before);
      expect(instant(sid)).toBeLessThanOrEqual(ims);
    }
    expect(sessions[0]!.sid.slice(0, 13) <= sessions[1]!.sid.slice(0, 13)).toBe(true);
  });

  it("refuses a wrong client_api_key with unauthenticated", async () => {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "c",
      chatbot_id: fx.a.chatbotId,
      client_api_key: "cak_wrong",
    });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe("unauthenticated");
    expect(reasonOf(r.body)).toBe("TokenInvalidError");
  });

  it("names a malformed chatbot_id", async () => {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "c",
      chatbot_id: "not-a-uuid",
      client_api_key: fx.a.apiKey,
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("invalid_argument");
    expect(r.body.message).toContain("chatbot_id");
  });
});

// An API key this instance has seen valid: an issue is one call of the store (one round trip on PostgreSQL), the
// per-account limit counted before the key's check, handed back when that check refuses. Its own server: a limit
// of two issues per account a minute, and the stream guard's log sweep a minute away, so that nothing but what a
// case does tells this instance of a change.
const limited = serverForFile({
  server: { env: { AIAGENT_RATE_LIMIT_PER_ACCOUNT: "2", AIAGENT_STREAM_RECHECK_MS: "60000" } },
});

describe("get_access_token with an API key seen valid", () => {
  const issue = (key: string, userId: string) =>
    postJson(limited.s.url, "/ai_agent/get_access_token", {
      user_id: userId,
      chatbot_id: limited.a.chatbotId,
      client_api_key: key,
    });
  const keyId = async (key: string) => (await limited.s.app.store.apiKeys.byHash(hashSecret(key)))!.apiKeyId;

  it("refuses a key revoked since at its next call, writes nothing, and hands the limit's slot back", async () => {
    const { s, a } = limited;
    const access = s.app.tokens.access;
    const key = (await s.app.accounts.createApiKey(a.email)).clientApiKey;
    const other = (await s.app.accounts.createApiKey(a.email)).clientApiKey;
    expect((await issue(key, "seen-1")).status).toBe(200); // the account's first issue this minute
    expect(access.knowsKey(key)).toBe(true);
    // Revoked in the store, and this instance deaf to the change (as if its notice were lost; on PostgreSQL the
    // trigger's NOTIFY reaches it too): it still knows the key.
    s.app.streams.dropTold = true;
    let refused: Awaited<ReturnType<typeof issue>>;
    try {
      await s.app.store.apiKeys.revoke(a.accountId, await keyId(key), 1);
      expect(access.knowsKey(key)).toBe(true);
      refused = await issue(key, "after-revoke");
    } finally {
      s.app.streams.dropTold = false;
    }
    expect(refused.status).toBe(401);
    expect(reasonOf(refused.body)).toBe("TokenRevokedError");
    expect(access.knowsKey(key)).toBe(false);
    expect(await s.app.store.privacy.contact(a.accountId, { userId: "after-revoke" })).toBeUndefined();
    expect(await s.app.store.refreshTokens.list({ accountId: a.accountId, userId: "after-revoke" }, 10, 0)).toEqual([]);
    // The refused call's slot was handed back: one more issue fits in the account's two, and no more.
    expect((await issue(other, "seen-2")).status).toBe(200);
    expect((await issue(other, "seen-3")).status).toBe(429);
  });

  it("issues a launch code and folds a contact profile in its one call too; an origin refused hands the slot back", async () => {
    const { s } = limited;
    const access = s.app.tokens.access;
    const c = await s.account();
    const key = (await s.app.accounts.createApiKey(c.email)).clientApiKey;
    const ask = (userId: string, more: Record<string, unknown>) =>
      postJson(s.url, "/ai_agent/get_access_token", {
        user_id: userId,
        chatbot_id: c.chatbotId,
        client_api_key: key,
        launch_code: true,
        ...more,
      });
    const first = await ask("lc-1", { contact: { contact_name: "Ann" } });
    expect(first.status).toBe(200);
    expect(access.knowsKey(key)).toBe(true);
    // The origin asked is checked in the store's one call: refused as on a first call, and the slot handed back.
    const refused = await ask("lc-1", { embed_origin: "https://elsewhere.example" });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_argument");
    expect(refused.body.message).toContain("embed_origin");
    expect(access.knowsKey(key)).toBe(true);
    const second = await ask("lc-1", {
      embed_origin: "https://shop.example/cart",
      contact: { email: "ann@x.example" },
    });
    expect(second.status).toBe(200);
    for (const r of [first, second]) {
      const d = r.body.data;
      expect(d.launch_code).toMatch(/^lc_/);
      expect(Number.isInteger(d.launch_code_expires_at)).toBe(true);
      const code = await s.app.store.launchCodes.byHash(hashSecret(d.launch_code));
      const sid = JSON.parse(Buffer.from(d.access_token.split(".")[1], "base64url").toString("utf8")).sid;
      expect(code).toMatchObject({ origin: "https://shop.example", sessionId: sid, userId: "lc-1", usedAt: null });
      expect(code!.expiresAt).toBe(d.launch_code_expires_at);
    }
    expect(await s.app.store.privacy.contact(c.accountId, { userId: "lc-1" })).toMatchObject({
      contactName: "Ann",
      email: "ann@x.example",
    });
    // Two issues counted in the account's two a minute: the refused one's was handed back.
    expect((await ask("lc-2", {})).status).toBe(429);
  });

  it("forgets a key once a revocation through this instance has answered", async () => {
    const { s } = limited;
    const access = s.app.tokens.access;
    // The guard has found its place in the change log (its first read tells "anything may have changed"): what is
    // forgotten below is forgotten by the revocation's own change.
    await s.app.streams.sweepLog();
    // Another account, so that the first case's limit does not refuse this one's issue.
    const b = await s.account();
    const key = (await s.app.accounts.createApiKey(b.email)).clientApiKey;
    const r = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "seen",
      chatbot_id: b.chatbotId,
      client_api_key: key,
    });
    expect(r.status).toBe(200);
    expect(access.knowsKey(key)).toBe(true);
    const owner = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const id = (await s.app.store.apiKeys.byHash(hashSecret(key)))!.apiKeyId;
    expect((await postJson(s.url, `/v1/account/api_keys/${id}/revoke`, {}, owner)).status).toBe(200);
    expect(access.knowsKey(key)).toBe(false);
  });
});
