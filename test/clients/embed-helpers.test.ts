import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { embedRoute, memoryStore } from "../../src/client/embed-route.js";
import { createEmbedSession, EmbedError, refreshAccessToken } from "../../src/client/index.js";
import { idToken } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// The embedding helpers (src/client/embed.ts and python/aiagent_embed) against a live service.
const run = promisify(execFile);
let s: TestServer;
let a: TestAccount;
let other: TestAccount;

function hasPython(): boolean {
  try {
    execFileSync("python3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  other = await s.account();
});
afterAll(() => s.close(true));

/** The frame address opens the chat, and its access token works on the frame's routes for that user. */
async function expectWorkingFrameUrl(frameUrl: string, chatbotId: string, userId: string): Promise<void> {
  const url = new URL(frameUrl);
  expect(url.pathname).toBe(`/chatbot-iframe/${chatbotId}`);
  expect(url.searchParams.get("user_id")).toBe(userId);
  expect((await fetch(frameUrl)).status).toBe(200);
  const r = await getJson(s.url, "/ai_agent/conversations", { access_token: url.searchParams.get("access_token")! });
  expect(r.status).toBe(200);
}

/** A launch address: only the code in it, the page embeddable only at the shop, and the code good for one start there. */
async function expectWorkingLaunchUrl(frameUrl: string, chatbotId: string, userId: string): Promise<void> {
  const url = new URL(frameUrl);
  expect(url.pathname).toBe(`/chatbot-iframe/${chatbotId}`);
  expect([...url.searchParams.keys()]).toEqual(["launch"]);
  const page = await fetch(frameUrl);
  expect(page.status).toBe(200);
  expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors https:\/\/shop\.example$/);
  const exchange = () =>
    postJson(s.url, "/ai_agent/launch", {
      chatbot_id: chatbotId,
      launch_code: url.searchParams.get("launch"),
      embed_origin: "https://shop.example",
    });
  const first = await exchange();
  expect(first.status).toBe(200);
  expect(first.body.data.user_id).toBe(userId);
  expect((await exchange()).status).toBe(401);
}

describe("createEmbedSession and refreshAccessToken (TypeScript)", () => {
  it("with launch, make an address that carries a one-time launch code instead of the access token", async () => {
    const session = await createEmbedSession({
      baseUrl: s.url,
      clientApiKey: a.apiKey,
      chatbotId: a.chatbotId,
      userId: "ts-launch",
      launch: true,
    });
    expect(session.launchCode).toMatch(/^lc_/);
    expect(session.frameUrl).not.toContain(session.accessToken);
    await expectWorkingLaunchUrl(session.frameUrl, a.chatbotId, "ts-launch");
  });

  it("make a working frame address, and a new access token from the kept refresh token", async () => {
    const session = await createEmbedSession({
      baseUrl: s.url,
      clientApiKey: a.apiKey,
      chatbotId: a.chatbotId,
      userId: "ts-user",
      hostOrigin: "https://shop.example",
    });
    await expectWorkingFrameUrl(session.frameUrl, a.chatbotId, "ts-user");
    expect(new URL(session.frameUrl).searchParams.get("host_origin")).toBe("https://shop.example");
    expect(session.refreshToken).toMatch(/^rt_/);
    expect(session.frameUrl).not.toContain(session.refreshToken);
    expect(session.accessTokenExpiresAt).toBeGreaterThan(Date.now());
    const fresh = await refreshAccessToken({
      baseUrl: s.url,
      chatbotId: a.chatbotId,
      userId: "ts-user",
      refreshToken: session.refreshToken,
    });
    expect(Object.keys(fresh).sort()).toEqual(["access_token", "expires_at"]);
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: fresh.access_token })).status).toBe(200);
  });

  it("refuse another account's chatbot, another user's refresh token, and an unreachable service, saying why", async () => {
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => expect.fail("expected an EmbedError"),
        (e: unknown) => e as EmbedError,
      );
    const session = await createEmbedSession({
      baseUrl: s.url,
      clientApiKey: a.apiKey,
      chatbotId: a.chatbotId,
      userId: "ts-user-2",
    });
    // Account A's key for account B's chatbot.
    const bola = await refused(
      createEmbedSession({ baseUrl: s.url, clientApiKey: a.apiKey, chatbotId: other.chatbotId, userId: "x" }),
    );
    expect(bola).toBeInstanceOf(EmbedError);
    // The service's one refusal for every wrong key/chatbot pair, so none can be told apart.
    expect({ status: bola.status, code: bola.code, reason: bola.reason, message: bola.message }).toEqual({
      status: 401,
      code: "unauthenticated",
      reason: "TokenInvalidError",
      message: "client_api_key is not valid for this chatbot_id",
    });
    // One user's refresh token for another user, and for another chatbot.
    for (const p of [
      { userId: "someone-else", chatbotId: a.chatbotId },
      { userId: "ts-user-2", chatbotId: other.chatbotId },
    ]) {
      const e = await refused(refreshAccessToken({ baseUrl: s.url, refreshToken: session.refreshToken, ...p }));
      expect(e.status).toBe(401);
      expect(e.code).toBe("unauthenticated");
    }
    const down = await refused(
      refreshAccessToken({ baseUrl: "http://127.0.0.1:9", chatbotId: a.chatbotId, userId: "u", refreshToken: "rt_x" }),
    );
    expect(down.status).toBe(0);
    expect(down.message).toMatch(/could not be reached/);
    await expect(
      createEmbedSession({ baseUrl: s.url, clientApiKey: "", chatbotId: a.chatbotId, userId: "u" }),
    ).rejects.toThrow("clientApiKey is required");
  });
});

describe.skipIf(!hasPython())("aiagent_embed.py (skipped without python3, Debian package python3)", () => {
  const script = `
import json, sys
sys.path.insert(0, "python")
from aiagent_embed import EmbedError, create_embed_session, refresh_access_token
base, key, bot, other_bot = sys.argv[1:5]
s = create_embed_session(base, key, bot, "py-user", contact={"name": "Grace Hopper", "email": "grace@example.com"})
launched = create_embed_session(base, key, bot, "py-launch", launch=True)
fresh = refresh_access_token(base, bot, "py-user", s["refresh_token"])
errors = []
for call in (lambda: create_embed_session(base, key, other_bot, "py-user"),
             lambda: refresh_access_token(base, bot, "someone-else", s["refresh_token"]),
             lambda: refresh_access_token("http://127.0.0.1:9", bot, "py-user", "rt_x")):
    try:
        call()
        errors.append(None)
    except EmbedError as e:
        errors.append({"status": e.status, "code": e.code, "message": str(e)})
print(json.dumps({"frame_url": s["frame_url"], "launch_url": launched["frame_url"], "fresh": sorted(fresh), "access_token": fresh["access_token"], "errors": errors}))
`;
  it("makes a working frame address and refreshes, and refuses another account's chatbot and another user's token", async () => {
    const { stdout } = await run("python3", ["-c", script, s.url, a.apiKey, a.chatbotId, other.chatbotId], {
      timeout: scaled(30_000),
    });
    const out = JSON.parse(stdout);
    await expectWorkingFrameUrl(out.frame_url, a.chatbotId, "py-user");
    await expectWorkingLaunchUrl(out.launch_url, a.chatbotId, "py-launch");
    expect(out.fresh).toEqual(["access_token", "expires_at"]);
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: out.access_token })).status).toBe(200);
    // The contact profile given reaches the account's contact list once the customer writes.
    await postJson(s.url, `/ai_agent/send_message?access_token=${out.access_token}`, { content: "Hello" });
    const idt = await postJson(s.url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey });
    const listed = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email, search: "py-user" },
      { authorization: `Bearer ${idt.body.data.idToken}` },
    );
    expect(listed.body.data.data.contacts[0]).toMatchObject({
      contact_name: "Grace Hopper",
      email: "grace@example.com",
    });
    const [bola, wrongUser, down] = out.errors;
    expect(bola).toEqual({
      status: 401,
      code: "unauthenticated",
      message: "client_api_key is not valid for this chatbot_id",
    });
    expect(wrongUser).toMatchObject({ status: 401, code: "unauthenticated" });
    expect(down.status).toBe(0);
    expect(down.message).toMatch(/could not be reached/);
    // Secrets are used, never printed.
    expect(stdout).not.toContain(a.apiKey);
    expect(stdout).not.toMatch(/rt_[A-Za-z0-9_-]{20,}/);
  });
});

// The one route of the framework helpers (src/client/embed-route.ts, python/aiagent_embed/route.py), with no framework:
// its refusals, and refresh-token rotation kept on the server.
describe("the embedding route (embedRoute, EmbedRoute)", () => {
  let rotating: TestAccount;
  beforeAll(async () => {
    rotating = await s.account();
    const auth = { authorization: `Bearer ${await idToken(s.url, rotating)}` };
    const policy = await postJson(
      s.url,
      `/v1/account/chatbots/${rotating.chatbotId}/session_policy`,
      { rotate_refresh_tokens: true, reuse_grace_seconds: 0 },
      auth,
    );
    expect(policy.status).toBe(200);
  });

  it("refuses a missing setting by name, and any request but a POST to session or refresh, with the header, of a signed-in user", async () => {
    expect(() => embedRoute({ user: () => null, baseUrl: s.url, chatbotId: a.chatbotId })).toThrow(
      /AIAGENT_CLIENT_API_KEY/,
    );
    const route = embedRoute<string | null>({
      user: (id) => (id ? { id } : null),
      baseUrl: s.url,
      chatbotId: a.chatbotId,
      clientApiKey: a.apiKey,
    });
    const ask = (endpoint: string, o: { method?: string; requestedWith?: string } = {}, user: string | null = "u1") =>
      route.handle({ endpoint, method: o.method ?? "POST", requestedWith: o.requestedWith ?? "aiagent-host" }, user);
    expect((await ask("session", { method: "GET" })).status).toBe(404);
    expect((await ask("other")).status).toBe(404);
    expect((await ask("session", { requestedWith: "XMLHttpRequest" })).status).toBe(403);
    expect((await ask("session", {}, null)).status).toBe(401);
    expect(await ask("refresh")).toEqual({ status: 401, body: { error: "no chat session: reload the page" } });
    const lines: string[] = [];
    const refused = embedRoute({
      user: () => ({ id: "u1" }),
      baseUrl: s.url,
      chatbotId: other.chatbotId,
      clientApiKey: a.apiKey,
      log: (l) => lines.push(l),
    });
    expect(await refused.handle({ endpoint: "session", method: "POST", requestedWith: "aiagent-host" }, null)).toEqual({
      status: 502,
      body: { error: "the chat service refused: client_api_key is not valid for this chatbot_id" },
    });
    expect(lines).toEqual(["aiagent: client_api_key is not valid for this chatbot_id"]);
  });

  it("keeps each rotated refresh token on the server and sends the page the access token only", async () => {
    const kept: string[] = [];
    const store = memoryStore();
    const route = embedRoute({
      user: () => ({ id: "rotating-ts", name: "Ada" }),
      baseUrl: s.url,
      chatbotId: rotating.chatbotId,
      clientApiKey: rotating.apiKey,
      store: {
        get: (id) => store.get(id),
        set: (id, token, exp) => {
          kept.push(token);
          return store.set(id, token, exp);
        },
      },
    });
    const ask = (endpoint: string) => route.handle({ endpoint, method: "POST", requestedWith: "aiagent-host" }, null);
    const session = await ask("session");
    expect(session.status).toBe(200);
    expect(new URL(String(session.body.frame_url)).searchParams.get("launch")).toMatch(/^lc_/);
    // With no grace, a retired token presented again would end the session: each refresh uses the one kept last.
    for (let i = 0; i < 3; i++) {
      const fresh = await ask("refresh");
      expect(fresh.status).toBe(200);
      expect(Object.keys(fresh.body).sort()).toEqual(["access_token", "expires_at"]);
    }
    expect(kept).toHaveLength(4);
    expect(new Set(kept).size).toBe(4);
  });

  it.skipIf(!hasPython())("EmbedRoute (Python) does the same", async () => {
    const script = `
import json, sys
sys.path.insert(0, "python")
from aiagent_embed.route import EmbedRoute
base, key, bot = sys.argv[1:4]
lines = []
route = EmbedRoute(base_url=base, chatbot_id=bot, client_api_key=key, log=lines.append)
def ask(endpoint, method="POST", header="aiagent-host", user={"id": "rotating-py", "name": "Ada"}):
    return route.handle(endpoint, method, None, header, user)
out = [ask("session", "GET"), ask("other"), ask("session", header="XMLHttpRequest"), ask("session", user=None), ask("refresh")]
session = ask("session")
out.append([session[0], sorted(session[1])])
out += [[s, sorted(b)] for s, b in (ask("refresh") for _ in range(3))]
try:
    EmbedRoute(base_url=base, chatbot_id=bot)
except ValueError as e:
    out.append(str(e))
print(json.dumps(out))
`;
    const { stdout } = await run("python3", ["-c", script, s.url, rotating.apiKey, rotating.chatbotId], {
      timeout: scaled(30_000),
      env: { ...process.env, AIAGENT_CLIENT_API_KEY: "" },
    });
    const out = JSON.parse(stdout);
    expect(out.slice(0, 5).map((r: [number, unknown]) => r[0])).toEqual([404, 404, 403, 401, 401]);
    expect(out.slice(5, 9)).toEqual([
      [200, ["frame_url"]],
      [200, ["access_token", "expires_at"]],
      [200, ["access_token", "expires_at"]],
      [200, ["access_token", "expires_at"]],
    ]);
    expect(out[9]).toMatch(/AIAGENT_CLIENT_API_KEY/);
    expect(stdout).not.toMatch(/rt_[A-Za-z0-9_-]{20,}/);
  });
});
