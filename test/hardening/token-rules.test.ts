import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { generatedSecretPath } from "../../src/key-encryption.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, reasonOf } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";
import { plainEncodings, withDecodedRuns } from "../helpers/secret-shapes.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { expectNoSecrets, runCli } from "./support.js";

let s: TestServer;
let a: TestAccount;
let b: TestAccount;
const secrets = new Set<string>();

beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  b = await s.account();
  secrets.add(a.apiKey).add(a.password).add(b.apiKey).add(b.password);
});

afterAll(async () => {
  expectNoSecrets(s.logs, secrets);
  await s.close(true);
});

const strip = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

describe("one answer for every wrong credential", () => {
  it("get_access_token: wrong key, unknown chatbot, another account's chatbot", async () => {
    const answers = await Promise.all([
      postJson(s.url, "/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: a.chatbotId,
        client_api_key: "cak_wrong",
      }),
      postJson(s.url, "/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: randomUUID(),
        client_api_key: a.apiKey,
      }),
      postJson(s.url, "/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: b.chatbotId,
        client_api_key: a.apiKey,
      }),
      postJson(s.url, "/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: randomUUID(),
        client_api_key: "cak_wrong",
      }),
    ]);
    expect(answers[0]!.status).toBe(401);
    for (const r of answers) expect(strip(r)).toEqual(strip(answers[0]!));
  });

  it("refresh_token: unknown token, another user's or chatbot's, revoked, or with another account's key", async () => {
    const t = await issueTokens(s.url, a, "refresh-user");
    const revoked = await issueTokens(s.url, a, "revoked-user");
    secrets.add(t.refresh_token).add(t.access_token).add(revoked.refresh_token).add(revoked.access_token);
    await s.app.tokens.revocations.revoke({ accountId: a.accountId, userId: "revoked-user" });
    const answers = await Promise.all([
      postJson(s.url, "/ai_agent/refresh_token", {
        user_id: "refresh-user",
        chatbot_id: a.chatbotId,
        refresh_token: "rt_unknown",
      }),
      postJson(s.url, "/ai_agent/refresh_token", {
        user_id: "someone-else",
        chatbot_id: a.chatbotId,
        refresh_token: t.refresh_token,
      }),
      postJson(s.url, "/ai_agent/refresh_token", {
        user_id: "refresh-user",
        chatbot_id: b.chatbotId,
        refresh_token: t.refresh_token,
      }),
      postJson(s.url, "/ai_agent/refresh_token", {
        user_id: "revoked-user",
        chatbot_id: a.chatbotId,
        refresh_token: revoked.refresh_token,
      }),
      postJson(s.url, "/ai_agent/refresh_token", {
        user_id: "refresh-user",
        chatbot_id: a.chatbotId,
        refresh_token: t.refresh_token,
        client_api_key: b.apiKey,
      }),
    ]);
    expect(answers[0]!.status).toBe(401);
    for (const r of answers) expect(strip(r)).toEqual(strip(answers[0]!));
  });

  it("get_id_token: wrong key, another account's key, unknown e-mail, wrong password", async () => {
    const answers = await Promise.all([
      postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: "cak_wrong" }),
      postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: b.apiKey }),
      postJson(s.url, "/get_id_token", { user_email_id: "nobody@example.com", client_api_key: a.apiKey }),
      postJson(s.url, "/get_id_token", { user_email_id: a.email, password: "wrong password" }),
      postJson(s.url, "/get_id_token", { user_email_id: "nobody@example.com", password: "wrong password" }),
    ]);
    expect(answers[0]!.status).toBe(401);
    for (const r of answers) expect(strip(r)).toEqual(strip(answers[0]!));
  });

  it("the same over Connect: one code, one message", async () => {
    const { tokens } = rpcClients(s.url, "connect-binary");
    const seen = new Set<string>();
    for (const req of [
      { userId: "u", chatbotId: a.chatbotId, clientApiKey: "cak_wrong" },
      { userId: "u", chatbotId: randomUUID(), clientApiKey: a.apiKey },
      { userId: "u", chatbotId: b.chatbotId, clientApiKey: a.apiKey },
    ]) {
      const err = await tokens.getAccessToken(req).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.Unauthenticated);
      seen.add(err!.rawMessage);
    }
    expect(seen.size).toBe(1);
  });
});

describe("bearer challenges and caching", () => {
  it('401 on the JSON routes: `Bearer` without a token, `Bearer error="invalid_token"` with a refused one', async () => {
    const none = await getJson(s.url, "/ai_agent/conversations");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    const bad = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email },
      { authorization: "Bearer nope" },
    );
    expect(bad.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
  });

  it("401 on Connect and gRPC carries the same challenge", async () => {
    for (const protocol of ["connect-json", "connect-binary", "grpc"] as const) {
      const { conversations } = rpcClients(s.url, protocol);
      const refused = await conversations.listFrameConversations({ accessToken: "not-a-token" }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(refused?.code).toBe(Code.Unauthenticated);
      expect(refused?.metadata.get("www-authenticate")).toBe('Bearer error="invalid_token"');
      const missing = await conversations.getContactConversations({ userEmailId: a.email }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(missing?.metadata.get("www-authenticate")).toBe("Bearer");
    }
  });

  it("every token response says Cache-Control: no-store, on JSON, Connect, gRPC and gRPC-Web", async () => {
    const t = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "cache-user",
      chatbot_id: a.chatbotId,
      client_api_key: a.apiKey,
    });
    secrets.add(t.body.data.access_token).add(t.body.data.refresh_token);
    const r = await postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "cache-user",
      chatbot_id: a.chatbotId,
      refresh_token: t.body.data.refresh_token,
    });
    const i = await postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey });
    secrets.add(r.body.data.access_token).add(i.body.data.idToken);
    for (const x of [t, r, i]) {
      expect(x.status).toBe(200);
      expect(x.headers.get("cache-control")).toBe("no-store");
    }
    for (const protocol of ["connect-json", "connect-binary", "grpc", "grpc-web"] as const) {
      const { tokens } = rpcClients(s.url, protocol);
      let header: string | null = null;
      const out = await tokens.getIdToken(
        { userEmailId: a.email, credential: { case: "clientApiKey", value: a.apiKey } },
        { onHeader: (h) => (header = h.get("cache-control")) },
      );
      secrets.add(out.data!.idToken);
      expect(header, protocol).toBe("no-store");
    }
  });
});

describe("revocation", () => {
  it("`aiagent tokens revoke`, run beside the live server, stops the users' access tokens on their very next call (cached or not)", async () => {
    const t = await issueTokens(s.url, a, "to-revoke");
    const bystander = await issueTokens(s.url, a, "bystander");
    secrets.add(t.access_token).add(t.refresh_token).add(bystander.access_token).add(bystander.refresh_token);
    const conv = (await send(s.url, t.access_token, "hello")).conversation_id;
    // Verified and cached by now.
    expect(
      (await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv, access_token: t.access_token }))
        .status,
    ).toBe(200);
    const cli = await runCli([
      "tokens",
      "revoke",
      "--db",
      s.dbPath,
      "--email",
      a.email,
      "--user-id",
      "to-revoke",
      "--json",
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ revoked: 1 });
    const after = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: conv,
      access_token: t.access_token,
    });
    expect(after.status).toBe(401);
    // Revoked, not malformed: the reason says so (docs/security.md), and the frame asks its host for a new token.
    expect(reasonOf(after.body)).toBe("TokenRevokedError");
    const refresh = await postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "to-revoke",
      chatbot_id: a.chatbotId,
      refresh_token: t.refresh_token,
    });
    expect(refresh.status).toBe(401);
    // Other users are untouched, and the revoked user can be let in again with a fresh issuance.
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: bystander.access_token })).status).toBe(
      200,
    );
    s.clock.advance(1);
    const fresh = await issueTokens(s.url, a, "to-revoke");
    secrets.add(fresh.access_token).add(fresh.refresh_token);
    expect(
      (
        await getJson(s.url, "/get_messages_for_conversation", {
          conversation_id: conv,
          access_token: fresh.access_token,
        })
      ).status,
    ).toBe(200);
  });
});

describe("secrets at rest", () => {
  it("API keys, refresh tokens, invitations and passwords are stored only as hashes, agent and signing keys encrypted", async () => {
    const t = await issueTokens(s.url, b, "at-rest");
    secrets.add(t.access_token).add(t.refresh_token);
    // The account API's secrets too: an invitation (accepted, and one pending), a member's password, an agent key.
    const admin = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const invite = (email: string) => postJson(s.url, "/v1/account/members", { email, role: "operator" }, admin);
    const pending = (await invite("pending@rest.example")).body.data.invitation_code as string;
    const accepted = (await invite("joined@rest.example")).body.data.invitation_code as string;
    const memberPassword = "member password at rest";
    await postJson(s.url, "/v1/invitations/accept", { invitation_code: accepted, password: memberPassword });
    const agentKey = "sk-agent-key-at-rest-0123456789";
    const bot = await postJson(
      s.url,
      "/v1/account/chatbots",
      {
        name: "Own model",
        allowed_origins: ["https://shop.example"],
        agent: { kind: "openai_compatible", base_url: "https://llm.example/v1", model: "m", api_key: agentKey },
      },
      admin,
    );
    expect(bot.status).toBe(200);
    const created = await postJson(s.url, "/v1/account/api_keys", { name: "at rest" }, admin);
    const newKey = created.body.data.client_api_key as string;
    secrets.add(pending).add(accepted).add(agentKey).add(newKey);
    const dump = withDecodedRuns(
      JSON.stringify(
        sqliteDb(s.app)
          .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
          .map(({ name }) => sqliteDb(s.app).prepare(`SELECT * FROM "${name}"`).all()),
      ),
    );
    const lowerDump = dump.toLowerCase();
    // In clear, or merely encoded (hex, base64…): either way the secret itself.
    for (const secret of [
      a.apiKey,
      b.apiKey,
      t.refresh_token,
      a.password,
      t.access_token,
      pending,
      accepted,
      memberPassword,
      agentKey,
      newKey,
    ])
      for (const form of plainEncodings(secret))
        expect(lowerDump.includes(form.toLowerCase()), `${secret.slice(0, 6)}… at rest, plain or encoded`).toBe(false);
    expect(
      /cak_[A-Za-z0-9_-]{20,}|rt_[A-Za-z0-9_-]{20,}|inv_[A-Za-z0-9_-]{20,}/.test(dump),
      "a credential at rest",
    ).toBe(false);
    // The signing keys' private halves are encrypted (not merely encoded): no JWK private member, in the tables nor
    // in the file's bytes.
    expect(/\\*"d\\*"\s*:/.test(dump), "a JWK private member at rest").toBe(false);
    const sealer = new KeySealer([readFileSync(generatedSecretPath(s.dbPath), "utf8").trim()]);
    const keys = await s.app.store.signingKeys.list();
    expect(keys.length).toBeGreaterThan(0);
    sqliteDb(s.app).pragma("wal_checkpoint(TRUNCATE)");
    const file = withDecodedRuns(readFileSync(s.dbPath).toString("latin1"));
    for (const k of keys) {
      const d = (JSON.parse(sealer.open(k.privateJwk, k.kid)) as { d: string }).d;
      expect(d.length).toBeGreaterThan(20);
      expect(dump.includes(d), "a private key in a table").toBe(false);
      expect(file.includes(d), "a private key in the database file").toBe(false);
    }
  });

  it("published keys are ES256 only, each naming its algorithm", async () => {
    const jwks = await getJson(s.url, "/.well-known/jwks.json");
    expect(jwks.body.keys.length).toBeGreaterThan(0);
    for (const k of jwks.body.keys) {
      expect(k.alg).toBe("ES256");
      expect(k.d).toBeUndefined();
    }
  });
});

it("ID tokens of one account cannot read another's conversations through any header trick", async () => {
  const tokenA = await idToken(s.url, a);
  secrets.add(tokenA);
  const r = await getJson(
    s.url,
    "/get_contact_conversations",
    { user_email_id: b.email },
    { authorization: `Bearer ${tokenA}` },
  );
  expect(r.status).toBe(403);
  const twoHeaders = await fetch(`${s.url}/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}`, {
    headers: [
      ["authorization", `Bearer ${tokenA}`],
      ["authorization", "Bearer x"],
    ],
  });
  expect(twoHeaders.status).toBe(401);
});
