import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { type RpcProtocol, rpcClients } from "../helpers/rpc.js";
import type { TestAccount } from "../helpers/server.js";

// The session registry and refresh-token rotation, the same on the JSON routes and every RPC protocol; each account
// sees and touches only its own sessions and chatbots (another's are not_found).

type Protocol = "json" | RpcProtocol;
const PROTOCOLS: Protocol[] = ["json", "connect-json", "connect-binary", "grpc", "grpc-web"];

interface SessionOut {
  sessionId: string;
  chatbotId: string;
  userId: string;
  status: string;
  lastOrigin: string;
  userAgent: string;
  revokedAt: string;
}

/** The registry and the refresh route over one protocol, in one shape. */
interface Api {
  list(
    id: string,
    q: { chatbotId?: string; userId?: string; limit?: number; offset?: number },
  ): Promise<{
    sessions: SessionOut[];
    hasMore: boolean;
  }>;
  revoke(id: string, sessionId: string): Promise<SessionOut>;
  policy(id: string, chatbotId: string): Promise<{ rotate: boolean; grace: number }>;
  setPolicy(
    id: string,
    chatbotId: string,
    rotate: boolean,
    grace?: number,
  ): Promise<{ rotate: boolean; grace: number }>;
  refresh(
    a: TestAccount,
    userId: string,
    refreshToken: string,
  ): Promise<{ accessToken: string; refreshToken?: string }>;
}

const CODES: Partial<Record<Code, string>> = {
  [Code.NotFound]: "not_found",
  [Code.Unauthenticated]: "unauthenticated",
  [Code.PermissionDenied]: "permission_denied",
  [Code.InvalidArgument]: "invalid_argument",
};

class JsonError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** The error code a call failed with ("not_found", …), whatever the protocol. */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof JsonError) return e.code;
    if (e instanceof ConnectError) return CODES[e.code] ?? String(e.code);
    throw e;
  }
  return "ok";
}

function jsonSession(s: any): SessionOut {
  return {
    sessionId: s.session_id,
    chatbotId: s.chatbot_id,
    userId: s.user_id,
    status: s.status,
    lastOrigin: s.last_origin,
    userAgent: s.user_agent,
    revokedAt: s.revoked_at,
  };
}

function api(url: string, protocol: Protocol): Api {
  if (protocol === "json") {
    const ok = <T>(r: { status: number; body: any }, f: (b: any) => T): T => {
      if (r.status !== 200) throw new JsonError(r.body?.code ?? String(r.status));
      return f(r.body);
    };
    const auth = (id: string) => ({ authorization: `Bearer ${id}` });
    return {
      list: async (id, q) => {
        const query: Record<string, string | number> = {};
        if (q.chatbotId) query.chatbot_id = q.chatbotId;
        if (q.userId) query.user_id = q.userId;
        if (q.limit !== undefined) query.limit = q.limit;
        if (q.offset !== undefined) query.offset = q.offset;
        return ok(await getJson(url, "/v1/account/sessions", query, auth(id)), (b) => ({
          sessions: b.data.sessions.map(jsonSession),
          hasMore: b.data.has_more,
        }));
      },
      revoke: async (id, sessionId) => {
        // No body: the session is named by the path.
        const r = await fetch(`${url}/v1/account/sessions/${sessionId}/revoke`, { method: "POST", headers: auth(id) });
        return ok({ status: r.status, body: await r.json() }, (b) => jsonSession(b.data));
      },
      policy: async (id, chatbotId) =>
        ok(await getJson(url, `/v1/account/chatbots/${chatbotId}/session_policy`, {}, auth(id)), (b) => ({
          rotate: b.data.rotate_refresh_tokens,
          grace: b.data.reuse_grace_seconds,
        })),
      setPolicy: async (id, chatbotId, rotate, grace) =>
        ok(
          await postJson(
            url,
            `/v1/account/chatbots/${chatbotId}/session_policy`,
            { rotate_refresh_tokens: rotate, ...(grace !== undefined ? { reuse_grace_seconds: grace } : {}) },
            auth(id),
          ),
          (b) => ({ rotate: b.data.rotate_refresh_tokens, grace: b.data.reuse_grace_seconds }),
        ),
      refresh: async (a, userId, refreshToken) =>
        ok(
          await postJson(url, "/ai_agent/refresh_token", {
            user_id: userId,
            chatbot_id: a.chatbotId,
            refresh_token: refreshToken,
          }),
          (b) => ({
            accessToken: b.data.access_token,
            ...(b.data.refresh_token !== undefined ? { refreshToken: b.data.refresh_token } : {}),
          }),
        ),
    };
  }
  const { sessions, tokens } = rpcClients(url, protocol);
  const h = (id: string) => ({ headers: { authorization: `Bearer ${id}` } });
  const out = (s: any): SessionOut => ({
    sessionId: s.sessionId,
    chatbotId: s.chatbotId,
    userId: s.userId,
    status: s.status,
    lastOrigin: s.lastOrigin,
    userAgent: s.userAgent,
    revokedAt: s.revokedAt,
  });
  return {
    list: async (id, q) => {
      const r = await sessions.listSessions(
        {
          chatbotId: q.chatbotId ?? "",
          userId: q.userId ?? "",
          ...(q.limit !== undefined ? { limit: q.limit } : {}),
          ...(q.offset !== undefined ? { offset: q.offset } : {}),
        },
        h(id),
      );
      return { sessions: r.data!.sessions.map(out), hasMore: r.data!.hasMore };
    },
    revoke: async (id, sessionId) => out((await sessions.revokeSession({ sessionId }, h(id))).data),
    policy: async (id, chatbotId) => {
      const p = (await sessions.getSessionPolicy({ chatbotId }, h(id))).data!;
      return { rotate: p.rotateRefreshTokens, grace: p.reuseGraceSeconds };
    },
    setPolicy: async (id, chatbotId, rotate, grace) => {
      const p = (
        await sessions.setSessionPolicy(
          {
            chatbotId,
            policy: { rotateRefreshTokens: rotate, ...(grace !== undefined ? { reuseGraceSeconds: grace } : {}) },
          },
          h(id),
        )
      ).data!;
      return { rotate: p.rotateRefreshTokens, grace: p.reuseGraceSeconds };
    },
    refresh: async (a, userId, refreshToken) => {
      const r = (await tokens.refreshToken({ userId, chatbotId: a.chatbotId, refreshToken })).data!;
      return { accessToken: r.accessToken, ...(r.refreshToken !== undefined ? { refreshToken: r.refreshToken } : {}) };
    },
  };
}

const fx = serverForFile({ accounts: 2, idTokens: true });

/** Whether an access token still works on a frame call. */
async function works(accessToken: string): Promise<boolean> {
  const r = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: accessToken });
  return r.status === 200;
}

describe.each(PROTOCOLS)("sessions over %s", (protocol) => {
  const user = `sessions-${protocol}`;

  it("lists a user's sessions newest first with what they are for, and revokes one: its access tokens stop at once, the other session's keep working", async () => {
    const x = api(fx.s.url, protocol);
    const first = await issueTokens(fx.s.url, fx.a, user);
    const second = await issueTokens(fx.s.url, fx.a, user);
    const page = await x.list(fx.idA, { userId: user });
    expect(page.hasMore).toBe(false);
    expect(page.sessions).toHaveLength(2);
    expect(
      page.sessions.every((r) => r.userId === user && r.chatbotId === fx.a.chatbotId && r.status === "active"),
    ).toBe(true);
    // Paged: one at a time, newest first.
    const p1 = await x.list(fx.idA, { chatbotId: fx.a.chatbotId, userId: user, limit: 1 });
    const p2 = await x.list(fx.idA, { chatbotId: fx.a.chatbotId, userId: user, limit: 1, offset: 1 });
    expect(p1.hasMore).toBe(true);
    expect(p2.hasMore).toBe(false);
    expect([p1.sessions[0]!.sessionId, p2.sessions[0]!.sessionId]).toEqual(page.sessions.map((r) => r.sessionId));
    // Nothing in the list is a credential.
    const listed = JSON.stringify(page);
    for (const t of [first.refresh_token, first.access_token, second.refresh_token]) expect(listed).not.toContain(t);

    // Which session is `first`? The one whose refresh token stops working when it is revoked.
    const [newer, older] = page.sessions;
    const revoked = await x.revoke(fx.idA, older!.sessionId);
    expect(revoked.status).toBe("revoked");
    expect(revoked.revokedAt).not.toBe("");
    expect(await works(first.access_token)).toBe(false);
    expect(await works(second.access_token)).toBe(true);
    expect(await codeOf(x.refresh(fx.a, user, first.refresh_token))).toBe("unauthenticated");
    const fresh = await x.refresh(fx.a, user, second.refresh_token);
    expect(await works(fresh.accessToken)).toBe(true);
    const after = await x.list(fx.idA, { userId: user });
    expect(after.sessions.map((r) => [r.sessionId, r.status])).toEqual([
      [newer!.sessionId, "active"],
      [older!.sessionId, "revoked"],
    ]);
  });

  it("another account's sessions and chatbots are not_found, and its list never shows them; an operator may not list", async () => {
    const x = api(fx.s.url, protocol);
    await issueTokens(fx.s.url, fx.a, `${user}-bola`);
    const mine = (await x.list(fx.idA, { userId: `${user}-bola` })).sessions[0]!;
    expect(await codeOf(x.revoke(fx.idB, mine.sessionId))).toBe("not_found");
    expect(await codeOf(x.list(fx.idB, { chatbotId: fx.a.chatbotId }))).toBe("not_found");
    expect(await codeOf(x.policy(fx.idB, fx.a.chatbotId))).toBe("not_found");
    expect(await codeOf(x.setPolicy(fx.idB, fx.a.chatbotId, true))).toBe("not_found");
    expect((await x.list(fx.idB, { userId: `${user}-bola` })).sessions).toEqual([]);
    expect((await x.list(fx.idB, {})).sessions.some((r) => r.sessionId === mine.sessionId)).toBe(false);
    // Untouched by all of that.
    expect((await x.list(fx.idA, { userId: `${user}-bola` })).sessions[0]!.status).toBe("active");
    expect((await x.policy(fx.idA, fx.a.chatbotId)).rotate).toBe(false);
    const op = await addMember(fx.s.url, fx.idA, `op-${protocol}@example.com`, "operator");
    expect(await codeOf(x.list(op.idToken, {}))).toBe("permission_denied");
  });
});

describe.each(PROTOCOLS)("refresh-token rotation over %s", (protocol) => {
  it("off by default (the documented answer); on: a new refresh token each time, the retired one answers the same within the grace, and after it ends the session", async () => {
    const x = api(fx.s.url, protocol);
    const c = await fx.s.account();
    const idC = await idToken(fx.s.url, c);
    const user = `rotation-${protocol}`;
    const t = await issueTokens(fx.s.url, c, user);
    // Off: the documented refresh answer, nothing more.
    expect(await x.policy(idC, c.chatbotId)).toEqual({ rotate: false, grace: 30 });
    expect((await x.refresh(c, user, t.refresh_token)).refreshToken).toBeUndefined();
    const documented = await postJson(fx.s.url, "/ai_agent/refresh_token", {
      user_id: user,
      chatbot_id: c.chatbotId,
      refresh_token: t.refresh_token,
    });
    expect(Object.keys(documented.body.data).sort()).toEqual(["access_token", "expires_at"]);

    expect(await x.setPolicy(idC, c.chatbotId, true, 20)).toEqual({ rotate: true, grace: 20 });
    const r1 = await x.refresh(c, user, t.refresh_token);
    expect(r1.refreshToken).toMatch(/^rt_/);
    expect(r1.refreshToken).not.toBe(t.refresh_token);
    // A lost answer, retried within the grace: the same new refresh token (no lockout).
    const retry = await x.refresh(c, user, t.refresh_token);
    expect(retry.refreshToken).toBe(r1.refreshToken);
    expect(await works(retry.accessToken)).toBe(true);
    // The new one rotates in turn.
    const r2 = await x.refresh(c, user, r1.refreshToken!);
    expect(r2.refreshToken).not.toBe(r1.refreshToken);
    expect(await works(r2.accessToken)).toBe(true);

    // r1 is retired and its successor already used: presenting it again ends the session, live tokens included.
    fx.s.clock.advance(21_000);
    expect(await codeOf(x.refresh(c, user, r1.refreshToken!))).toBe("unauthenticated");
    expect(await works(r2.accessToken)).toBe(false);
    expect(await codeOf(x.refresh(c, user, r2.refreshToken!))).toBe("unauthenticated");
    expect((await x.list(idC, { userId: user })).sessions.map((r) => r.status)).toEqual(["revoked"]);

    // The grace alone: a retired token whose successor was never used works within it, and not after it.
    const u = await issueTokens(fx.s.url, c, `${user}-2`);
    const n1 = await x.refresh(c, `${user}-2`, u.refresh_token);
    fx.s.clock.advance(21_000);
    expect(await codeOf(x.refresh(c, `${user}-2`, u.refresh_token))).toBe("unauthenticated");
    expect(await codeOf(x.refresh(c, `${user}-2`, n1.refreshToken!))).toBe("unauthenticated");
    // A refresh token never issued is still just unknown, and ends nothing.
    expect(await codeOf(x.refresh(c, user, "rt_neverissuedneverissued"))).toBe("unauthenticated");
    expect(await codeOf(x.setPolicy(idC, c.chatbotId, true, 301))).toBe("invalid_argument");
  });
});

describe("launch codes", () => {
  const user = "launch-user";

  async function issueWithCode(account: TestAccount, extra: Record<string, unknown> = {}) {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: user,
      chatbot_id: account.chatbotId,
      client_api_key: account.apiKey,
      launch_code: true,
      ...extra,
    });
    return r;
  }
  const exchange = (chatbotId: string, code: string, origin: string, headers: Record<string, string> = {}) =>
    postJson(fx.s.url, "/ai_agent/launch", { chatbot_id: chatbotId, launch_code: code, embed_origin: origin }, headers);

  it("is issued only when asked (the documented answer is unchanged), works once, under its origin, for its chatbot, for 60 s; every refusal is logged", async () => {
    const plain = await issueTokens(fx.s.url, fx.a, user);
    expect(Object.keys(plain).sort()).toEqual([
      "access_token",
      "access_token_expires_at",
      "refresh_token",
      "refresh_token_expires_at",
    ]);
    const before = fx.s.clock.now();
    const r = await issueWithCode(fx.a);
    const after = fx.s.clock.now();
    expect(r.status).toBe(200);
    const code: string = r.body.data.launch_code;
    expect(code).toMatch(/^lc_/);
    // Valid 60 s from its issue.
    expect(r.body.data.launch_code_expires_at).toBeGreaterThanOrEqual(before + 60_000);
    expect(r.body.data.launch_code_expires_at).toBeLessThanOrEqual(after + 60_000);

    expect((await exchange(fx.a.chatbotId, code, "https://evil.example")).status).toBe(401);
    expect((await exchange(fx.b.chatbotId, code, "https://shop.example")).status).toBe(401);
    const ok = await exchange(fx.a.chatbotId, code, "https://shop.example", { "user-agent": "LaunchTest/1.0" });
    expect(ok.status).toBe(200);
    expect(ok.body.data.user_id).toBe(user);
    expect(await works(ok.body.data.access_token)).toBe(true);
    expect((await exchange(fx.a.chatbotId, code, "https://shop.example")).status).toBe(401);
    // The session shows where it was launched and from which browser.
    const listed = await getJson(
      fx.s.url,
      "/v1/account/sessions",
      { user_id: user, limit: 1 },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(listed.body.data.sessions[0]).toMatchObject({
      last_origin: "https://shop.example",
      user_agent: "LaunchTest/1.0",
    });

    const late = (await issueWithCode(fx.a)).body.data.launch_code as string;
    fx.s.clock.advance(60_000);
    expect((await exchange(fx.a.chatbotId, late, "https://shop.example")).status).toBe(401);
    expect(
      (await exchange(fx.a.chatbotId, "lc_neverissuedneverissuedneverissued", "https://shop.example")).status,
    ).toBe(401);

    const why = fx.s.logs
      .filter((l) => l.includes('"launch code refused"'))
      .map((l) => JSON.parse(l).why as string)
      .sort();
    expect(why).toEqual(["chatbot", "expired", "origin", "unknown", "used"]);
    const log = fx.s.logs.join("\n");
    expect(log).not.toContain(code);
    expect(log).not.toContain(late);
  });

  it("is bound to an allowed origin: named when the chatbot has several, refused when not allowed", async () => {
    const c = await fx.s.account({ origins: ["https://a.example", "https://b.example"] });
    const none = await issueWithCode(c);
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/^embed_origin:/);
    expect((await issueWithCode(c, { embed_origin: "https://c.example" })).status).toBe(400);
    const r = await issueWithCode(c, { embed_origin: "https://b.example/shop" });
    expect(r.status).toBe(200);
    expect((await exchange(c.chatbotId, r.body.data.launch_code, "https://a.example")).status).toBe(401);
    expect((await exchange(c.chatbotId, r.body.data.launch_code, "https://b.example")).status).toBe(200);
  });

  it("is rate limited like the token routes: codes never issued are counted, then the chatbot is blocked from this address", async () => {
    const c = await fx.s.account();
    const real = (await issueWithCode(c)).body.data.launch_code as string;
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push((await exchange(c.chatbotId, `lc_guess${i}guessguessguessguess`, "https://shop.example")).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
    // The block holds for a real code too (the limit is checked first), and for the chatbot's other token routes.
    expect((await exchange(c.chatbotId, real, "https://shop.example")).status).toBe(429);
    expect((await issueWithCode(c)).status).toBe(429);
  });

  it("stops working when its session is revoked before the frame uses it", async () => {
    const r = await issueWithCode(fx.a, { user_id: "launch-revoked" });
    const rev = await postJson(
      fx.s.url,
      "/v1/account/sessions/revoke",
      { user_id: "launch-revoked" },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(rev.status).toBe(200);
    expect((await exchange(fx.a.chatbotId, r.body.data.launch_code, "https://shop.example")).status).toBe(401);
    // A frame message with the issued access token is refused too.
    await expect(send(fx.s.url, r.body.data.access_token, "hello")).rejects.toThrow(/401/);
  });
});
