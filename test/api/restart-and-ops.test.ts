import { createLocalJWKSet, jwtVerify } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { idToken, issueTokens } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close(true).catch(() => undefined);
});

describe("a restart on the same database", () => {
  it("keeps earlier refresh tokens, access tokens and signing keys valid", async () => {
    const first = await startServer();
    const a = await first.account();
    const t = await issueTokens(first.url, a, "survivor");
    const jwksBefore = (await getJson(first.url, "/.well-known/jwks.json")).body;
    await first.close();

    const second = await startServer({ dir: first.dir });
    servers.push(second);
    const jwksAfter = (await getJson(second.url, "/.well-known/jwks.json")).body;
    expect(jwksAfter).toEqual(jwksBefore);
    const r = await postJson(second.url, "/ai_agent/refresh_token", {
      user_id: "survivor",
      chatbot_id: a.chatbotId,
      refresh_token: t.refresh_token,
    });
    expect(r.status).toBe(200);
    expect((await getJson(second.url, "/ai_agent/conversations", { access_token: t.access_token })).status).toBe(200);
  });
});

describe("operations", () => {
  it("answers /healthz and /readyz, and publishes verification keys that verify issued tokens", async () => {
    const s = await startServer();
    servers.push(s);
    expect((await getJson(s.url, "/healthz")).body).toEqual({ status: "ok" });
    expect((await getJson(s.url, "/readyz")).body).toEqual({ status: "ready", mail: { relay: "not configured" } });
    const jwks = (await getJson(s.url, "/.well-known/jwks.json")).body;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const a = await s.account();
    const t = await issueTokens(s.url, a, "jwks-user");
    const { payload, protectedHeader } = await jwtVerify(t.access_token, createLocalJWKSet(jwks), {
      audience: "aiagent:frame",
      issuer: "aiagent",
    });
    expect(payload.sub).toBe("jwks-user");
    expect(payload.cid).toBe(a.chatbotId);
    expect(protectedHeader.alg).toBe("ES256");
    expect(protectedHeader.typ).toBe("at+jwt");
    expect(protectedHeader.kid).toBe(jwks.keys[0].kid);
    expect(Object.keys(payload).sort()).toEqual(["acc", "aud", "cid", "exp", "iat", "ims", "iss", "jti", "sid", "sub"]);
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload.exp! * 1000).toBe(t.access_token_expires_at);

    const id = await jwtVerify(await idToken(s.url, a), createLocalJWKSet(jwks), {
      audience: "aiagent:account-api",
      issuer: "aiagent",
      typ: "id+jwt",
    });
    expect(id.payload.sub).toBe(a.accountId);
    expect(id.payload.email).toBe(a.email);
    expect(id.protectedHeader).toEqual({ alg: "ES256", kid: jwks.keys[0].kid, typ: "id+jwt" });
  });

  it("after a key rotation, tokens signed with the older key still verify and new ones use the new key", async () => {
    const s = await startServer();
    servers.push(s);
    const a = await s.account();
    const old = await issueTokens(s.url, a, "rot");
    await s.app.keys.rotate();
    const jwks = (await getJson(s.url, "/.well-known/jwks.json")).body;
    expect(jwks.keys).toHaveLength(2);
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: old.access_token })).status).toBe(200);
    const fresh = await issueTokens(s.url, a, "rot");
    expect(JSON.parse(Buffer.from(fresh.access_token.split(".")[0]!, "base64url").toString()).kid).not.toBe(
      JSON.parse(Buffer.from(old.access_token.split(".")[0]!, "base64url").toString()).kid,
    );
  });

  it("logs each request at debug level as JSON, with the access_token parameter and every secret redacted", async () => {
    const s = await startServer();
    servers.push(s);
    const a = await s.account();
    const t = await issueTokens(s.url, a, "logged-user");
    await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
    await postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "logged-user",
      chatbot_id: a.chatbotId,
      refresh_token: t.refresh_token,
    });
    // The request line is written once the answer has gone: wait for it, not for a time.
    await waitFor("the frame call's request line", () => s.logs.some((l) => l.includes("/ai_agent/conversations")));
    const lines = s.logs.map((l) => JSON.parse(l) as { msg: string; url?: string; status?: number });
    const frameCall = lines.find((l) => l.msg === "request" && l.url?.startsWith("/ai_agent/conversations"));
    expect(frameCall?.url).toBe("/ai_agent/conversations?access_token=[REDACTED]");
    expect(frameCall?.status).toBe(200);
    const all = s.logs.join("");
    for (const secret of [t.access_token, t.refresh_token, a.apiKey]) expect(all).not.toContain(secret);
  });

  it("answers an unknown path with a JSON 404", async () => {
    const s = await startServer();
    servers.push(s);
    const r = await getJson(s.url, "/no/such/thing");
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
  });
});
