import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { findAnywhere } from "../helpers/every-row.js";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens } from "../helpers/flows.js";
import { getJson, postJson, reasonOf } from "../helpers/http.js";
import { countRows } from "../helpers/rows.js";
import { type RpcProtocol, rpcClients } from "../helpers/rpc.js";
import { plainEncodings } from "../helpers/secret-shapes.js";

const fx = serverForFile({ accounts: 2 });

const refresh = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  postJson(fx.s.url, "/ai_agent/refresh_token", body, headers);

describe("generated clients", () => {
  for (const protocol of ["connect-json", "connect-binary", "grpc", "grpc-web"] as RpcProtocol[]) {
    it(`get an access token and refresh it over ${protocol}`, async () => {
      const { tokens } = rpcClients(fx.s.url, protocol);
      const r = await tokens.getAccessToken({
        userId: "rpc-user",
        chatbotId: fx.a.chatbotId,
        clientApiKey: fx.a.apiKey,
      });
      expect(r.data?.accessToken.split(".")).toHaveLength(3);
      expect(r.data?.refreshToken).toMatch(/^rt_/);
      expect(typeof r.data?.accessTokenExpiresAt).toBe("bigint");
      expect(Number(r.data!.accessTokenExpiresAt)).toBeGreaterThan(Date.now());
      const f = await tokens.refreshToken({
        userId: "rpc-user",
        chatbotId: fx.a.chatbotId,
        refreshToken: r.data!.refreshToken,
      });
      expect(f.data?.accessToken).not.toBe("");
    });
  }

  it("report errors with Connect codes and a machine-readable reason over gRPC", async () => {
    const { tokens } = rpcClients(fx.s.url, "grpc");
    const err = await tokens
      .getAccessToken({ userId: "u", chatbotId: fx.a.chatbotId, clientApiKey: "cak_nope" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe("TokenInvalidError");
    const bad = await tokens
      .getAccessToken({ userId: "u", chatbotId: "nope", clientApiKey: fx.a.apiKey })
      .catch((e: unknown) => e);
    expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
    expect((bad as ConnectError).rawMessage).toContain("chatbot_id");
  });
});

describe("POST /ai_agent/refresh_token", () => {
  it("returns {data: {access_token, expires_at}} with an integer millisecond expiry", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "refresh-user");
    const r = await refresh({ user_id: "refresh-user", chatbot_id: fx.a.chatbotId, refresh_token: t.refresh_token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["data"]);
    expect(Object.keys(r.body.data).sort()).toEqual(["access_token", "expires_at"]);
    expect(Number.isInteger(r.body.data.expires_at)).toBe(true);
    expect(r.body.data.expires_at).toBeGreaterThan(Date.now());
    expect(r.headers.get("cache-control")).toBe("no-store");
    // The new token works in the frame's read.
    const list = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: r.body.data.access_token });
    expect(list.status).toBe(200);
  });

  it("accepts a matching optional client_api_key and refuses another account's", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "key-check");
    expect(
      (
        await refresh({
          user_id: "key-check",
          chatbot_id: fx.a.chatbotId,
          refresh_token: t.refresh_token,
          client_api_key: fx.a.apiKey,
        })
      ).status,
    ).toBe(200);
    const r = await refresh({
      user_id: "key-check",
      chatbot_id: fx.a.chatbotId,
      refresh_token: t.refresh_token,
      client_api_key: fx.b.apiKey,
    });
    expect(r.status).toBe(401);
  });

  it("refuses a wrong user_id, wrong chatbot_id, made-up, revoked or expired refresh token with unauthenticated", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "victim");
    const cases: Record<string, unknown>[] = [
      { user_id: "someone-else", chatbot_id: fx.a.chatbotId, refresh_token: t.refresh_token },
      { user_id: "victim", chatbot_id: fx.b.chatbotId, refresh_token: t.refresh_token },
      {
        user_id: "victim",
        chatbot_id: fx.a.chatbotId,
        refresh_token: "rt_madeupmadeupmadeupmadeupmadeupmadeupmadeupm",
      },
    ];
    for (const body of cases) {
      const r = await refresh(body);
      expect(r.status, JSON.stringify(body)).toBe(401);
      expect(r.body.code).toBe("unauthenticated");
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
    // Revoked: through the same use case the `aiagent tokens revoke` command calls.
    await fx.s.app.tokens.revocations.revoke({
      accountId: fx.a.accountId,
      chatbotId: fx.a.chatbotId,
      userId: "victim",
    });
    const revoked = await refresh({ user_id: "victim", chatbot_id: fx.a.chatbotId, refresh_token: t.refresh_token });
    expect(revoked.status).toBe(401);
    // Expired: move the service's clock past the refresh lifetime.
    const t2 = await issueTokens(fx.s.url, fx.a, "sleeper");
    fx.s.clock.advance(31 * 24 * 3600 * 1000);
    try {
      const expired = await refresh({
        user_id: "sleeper",
        chatbot_id: fx.a.chatbotId,
        refresh_token: t2.refresh_token,
      });
      expect(expired.status).toBe(401);
      expect(reasonOf(expired.body)).toBe("TokenExpiredError");
    } finally {
      fx.s.clock.advance(-31 * 24 * 3600 * 1000);
    }
  });

  it("lets a revoked user's live access token go no further", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "revoke-live");
    expect((await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t.access_token })).status).toBe(200);
    await fx.s.app.tokens.revocations.revoke({ accountId: fx.a.accountId, userId: "revoke-live" });
    const r = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(r.status).toBe(401);
    // A token issued after the revocation works again.
    const fresh = await issueTokens(fx.s.url, fx.a, "revoke-live");
    expect((await getJson(fx.s.url, "/ai_agent/conversations", { access_token: fresh.access_token })).status).toBe(200);
  });
});

describe("access token expiry", () => {
  it("answers TokenExpiredError once the access token's lifetime has passed", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "expiring");
    fx.s.clock.advance(15 * 60 * 1000 + 6000);
    try {
      const r = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t.access_token });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe("unauthenticated");
      expect(reasonOf(r.body)).toBe("TokenExpiredError");
      expect(r.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    } finally {
      fx.s.clock.advance(-(15 * 60 * 1000 + 6000));
    }
  });
});

describe("bad requests change nothing and say what was wrong", () => {
  const count = () => countRows(fx.s.app, "SELECT count(*) AS n FROM refresh_tokens");

  it("wrong client_api_key → unauthenticated", async () => {
    const before = await count();
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "x",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.b.apiKey,
    });
    expect(r.status).toBe(401);
    expect(r.body.message).not.toContain(fx.b.apiKey);
    expect(await count()).toBe(before);
  });

  it("malformed JSON, a wrong content type, a missing field and an unknown field → invalid_argument", async () => {
    const before = await count();
    const bad = await postJson(fx.s.url, "/ai_agent/get_access_token", '{"user_id": ');
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_argument");
    expect(bad.body.message).toMatch(/JSON/);
    const type = await fetch(`${fx.s.url}/ai_agent/get_access_token`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(type.status).toBe(400);
    expect(((await type.json()) as { message: string }).message).toContain("content-type");
    const missing = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("user_id");
    const unknown = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "x",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
      user_ide: "typo",
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("user_ide");
    const wrongType = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: 42,
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toContain("user_id");
    expect(await count()).toBe(before);
  });

  it("a token request carrying a browser's markers → permission_denied, with no CORS headers", async () => {
    for (const headers of [{ origin: "https://shop.example" }, { "sec-fetch-site": "cross-site" }] as Record<
      string,
      string
    >[]) {
      const r = await postJson(
        fx.s.url,
        "/ai_agent/get_access_token",
        { user_id: "x", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey },
        headers,
      );
      expect(r.status).toBe(403);
      expect(r.body.code).toBe("permission_denied");
      expect(r.body.message).toMatch(/server/);
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
    }
    const rf = await refresh(
      { user_id: "x", chatbot_id: fx.a.chatbotId, refresh_token: "rt_x" },
      { origin: "https://shop.example" },
    );
    expect(rf.status).toBe(403);
  });

  it("Node's own fetch (Sec-Fetch-Mode only) is a server and is served", async () => {
    const r = await postJson(
      fx.s.url,
      "/ai_agent/get_access_token",
      { user_id: "node", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey },
      { "sec-fetch-mode": "cors" },
    );
    expect(r.status).toBe(200);
  });

  it("a wrong verb on a documented path → 405 with Allow", async () => {
    const r = await getJson(fx.s.url, "/ai_agent/get_access_token");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
  });
});

describe("ID tokens and access tokens are not interchangeable", () => {
  it("GET /get_id_token with an API key or a password", async () => {
    const k = await postJson(fx.s.url, "/get_id_token", { user_email_id: fx.a.email, client_api_key: fx.a.apiKey });
    expect(k.status).toBe(200);
    expect(Object.keys(k.body.data).sort()).toEqual(["expires_at", "idToken"]);
    expect(Number.isInteger(k.body.data.expires_at)).toBe(true);
    const p = await postJson(fx.s.url, "/get_id_token", { user_email_id: fx.a.email, password: fx.a.password });
    expect(p.status).toBe(200);
    const wrong = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: fx.a.email,
      password: "not the password",
    });
    expect(wrong.status).toBe(401);
    const other = await postJson(fx.s.url, "/get_id_token", { user_email_id: fx.a.email, client_api_key: fx.b.apiKey });
    expect(other.status).toBe(401);
    const both = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: fx.a.email,
      client_api_key: fx.a.apiKey,
      password: fx.a.password,
    });
    expect(both.status).toBe(400);
  });

  it("an access token is refused where an ID token is required, and the reverse", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "swap");
    const asId = await getJson(
      fx.s.url,
      "/get_contact_conversations",
      { user_email_id: fx.a.email },
      { authorization: `Bearer ${t.access_token}` },
    );
    expect(asId.status).toBe(401);
    const id = (await postJson(fx.s.url, "/get_id_token", { user_email_id: fx.a.email, client_api_key: fx.a.apiKey }))
      .body.data.idToken as string;
    const asAccess = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: id });
    expect(asAccess.status).toBe(401);
    expect(reasonOf(asAccess.body)).toBe("TokenInvalidError");
  });
});

describe("secrets at rest", () => {
  // The file-level check is SQLite's; on PostgreSQL the same repositories store the same hashes.
  it.skipIf(process.env.AIAGENT_TEST_BACKEND !== undefined)(
    "the SQLite files hold no plaintext API key, refresh token or password",
    async () => {
      const t = await issueTokens(fx.s.url, fx.a, "at-rest");
      const files = readdirSync(fx.s.dir).filter((f) => f.startsWith("aiagent.db"));
      expect(files).toContain("aiagent.db");
      const bytes = Buffer.concat(files.map((f) => readFileSync(join(fx.s.dir, f))));
      for (const secret of [fx.a.apiKey, t.refresh_token, fx.a.password, fx.b.apiKey]) {
        expect(bytes.includes(Buffer.from(secret))).toBe(false);
      }
    },
  );

  it("no row of any table holds a refresh token, API key or password, in clear or merely encoded (hex, base64…)", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "at-rest-encoded");
    // Still found by what is stored (so the check below is of the stored form, not of a dead row).
    const next = await refresh({
      user_id: "at-rest-encoded",
      chatbot_id: fx.a.chatbotId,
      refresh_token: t.refresh_token,
    });
    expect(next.status).toBe(200);
    for (const secret of [t.refresh_token, fx.a.apiKey, fx.a.password]) {
      const found = await findAnywhere(fx.s.app, plainEncodings(secret));
      expect(found.length, `${secret.slice(0, 3)}… at rest in ${found.map((f) => f.split(":")[0]).join(", ")}`).toBe(0);
    }
  });
});
