import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLlmStandIn, streamReply } from "../frame/llm-stand-in.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, reasonOf, requestJson } from "../helpers/http.js";
import { selectRows } from "../helpers/rows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// The account API over its JSON routes (the same handlers serve Connect, gRPC and gRPC-Web): what a client's
// people and servers do for themselves, on either back end.

let s: TestServer;
let a: TestAccount;
let admin: Record<string, string>;

const req = async (method: string, path: string, auth: Record<string, string>, body?: unknown) => {
  const r = await requestJson(s.url, method, path, auth, body);
  return { ...r, text: JSON.stringify(r.body) };
};

/** Every row of every table the back end holds, as text: what a copy of the database would give away. */
async function dump(): Promise<string> {
  const tables = ["accounts", "api_keys", "chatbots", "members", "refresh_tokens"];
  const out: unknown[] = [];
  for (const t of tables) out.push(await selectRows(s.app, `SELECT * FROM ${t}`));
  return JSON.stringify(out);
}

/** Runs fn at `ms` after now on the server's clock, then puts the clock back to the real time. */
async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  s.clock.freezeAt(s.clock.now() + ms);
  try {
    return await fn();
  } finally {
    s.clock.freezeAt(Date.now());
    s.clock.resume();
  }
}

beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  admin = { authorization: `Bearer ${await idToken(s.url, a)}` };
});
afterAll(() => s.close(true));

describe("API keys", () => {
  it("shows a new key once, lists it without the secret, and stores only its hash", async () => {
    const created = await req("POST", "/v1/account/api_keys", admin, { name: "CI server" });
    expect(created.status).toBe(200);
    const key = created.body.data.client_api_key as string;
    expect(key).toMatch(/^cak_/);
    expect(created.body.data.api_key).toMatchObject({ name: "CI server", status: "active", prefix: key.slice(0, 8) });
    const listed = await req("GET", "/v1/account/api_keys", admin);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(listed.body.data.api_keys.map((k: { name: string }) => k.name)).toContain("CI server");
    expect(await dump()).not.toContain(key);
    // The new key works where the old one did.
    expect((await issueTokens(s.url, { ...a, apiKey: key }, "key-user")).access_token).toBeTruthy();
  });

  it("rotates: an older key works through its grace period and not after", async () => {
    const b = await s.account();
    const auth = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const r = await req("POST", "/v1/account/api_keys/rotate", auth, { grace_seconds: 60 });
    expect(r.status).toBe(200);
    expect(r.body.data.older_keys).toHaveLength(1);
    expect(r.body.data.older_keys[0].status).toBe("expiring");
    const fresh = r.body.data.created.client_api_key as string;
    expect((await issueTokens(s.url, b, "u1")).access_token).toBeTruthy();
    await later(61_000, async () => {
      const old = await postJson(s.url, "/ai_agent/get_access_token", {
        user_id: "u1",
        chatbot_id: b.chatbotId,
        client_api_key: b.apiKey,
      });
      expect(old.status).toBe(401);
      expect((await issueTokens(s.url, { ...b, apiKey: fresh }, "u1")).access_token).toBeTruthy();
    });
  });

  it("revokes one key at once; another account's key is not_found and stays usable", async () => {
    const b = await s.account();
    const other = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const [bKey] = (await req("GET", "/v1/account/api_keys", other)).body.data.api_keys;
    const cross = await req("POST", `/v1/account/api_keys/${bKey.api_key_id}/revoke`, admin, {});
    expect(cross.status).toBe(404);
    expect((await issueTokens(s.url, b, "still-works")).access_token).toBeTruthy();
    const own = await req("POST", `/v1/account/api_keys/${bKey.api_key_id}/revoke`, other, {});
    expect(own.status).toBe(200);
    expect(own.body.data.status).toBe("revoked");
    const refused = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "u",
      chatbot_id: b.chatbotId,
      client_api_key: b.apiKey,
    });
    expect(refused.status).toBe(401);
  });
});

describe("chatbots", () => {
  it("creates, reads, lists and updates a chatbot; bad settings are refused naming the field", async () => {
    const created = await req("POST", "/v1/account/chatbots", admin, {
      name: "Returns desk",
      allowed_origins: ["https://returns.example"],
      knowledge: [{ title: "Returns", url: "https://returns.example/policy", snippet: "30 days to return." }],
    });
    expect(created.status).toBe(200);
    const bot = created.body.data;
    expect(bot).toMatchObject({ name: "Returns desk", active: true, agent: { kind: "built_in" } });
    expect((await req("GET", `/v1/account/chatbots/${bot.chatbot_id}`, admin)).body.data).toEqual(bot);
    const listed = (await req("GET", "/v1/account/chatbots", admin)).body.data.chatbots;
    expect(listed.map((c: { chatbot_id: string }) => c.chatbot_id)).toContain(bot.chatbot_id);
    const renamed = await req("PATCH", `/v1/account/chatbots/${bot.chatbot_id}`, admin, { name: "Returns" });
    expect(renamed.body.data).toMatchObject({ name: "Returns", allowed_origins: ["https://returns.example"] });
    expect(renamed.body.data.knowledge).toHaveLength(1);
    const cleared = await req("PATCH", `/v1/account/chatbots/${bot.chatbot_id}`, admin, {
      knowledge: { snippets: [] },
    });
    expect(cleared.body.data.knowledge).toEqual([]);
    const bad = await req("POST", "/v1/account/chatbots", admin, { name: "x", allowed_origins: ["*"] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("allowed_origins");
    const badAgent = await req("PATCH", `/v1/account/chatbots/${bot.chatbot_id}`, admin, {
      agent: { kind: "openai_compatible", base_url: "ftp://llm.example", model: "m" },
    });
    expect(badAgent.status).toBe(400);
    expect(badAgent.body.message).toContain("agent.base_url");
    expect((await req("GET", `/v1/account/chatbots/${bot.chatbot_id}`, admin)).body.data.name).toBe("Returns");
  });

  it("keeps an agent endpoint's API key write-only and encrypted, and answers through that endpoint", async () => {
    const llm = await startLlmStandIn();
    try {
      llm.behave(streamReply(["From your own model."]));
      const secret = "sk-endpoint-secret-0123456789";
      const created = await req("POST", "/v1/account/chatbots", admin, {
        name: "Own model",
        allowed_origins: ["https://shop.example"],
        agent: { kind: "openai_compatible", base_url: llm.url, model: "shop-model", api_key: secret },
      });
      expect(created.status).toBe(200);
      const bot = created.body.data;
      expect(bot.agent).toEqual({
        kind: "openai_compatible",
        follows_service_default: false,
        base_url: llm.url,
        model: "shop-model",
        api_key: "",
        has_api_key: true,
      });
      expect(JSON.stringify(await req("GET", `/v1/account/chatbots/${bot.chatbot_id}`, admin))).not.toContain(secret);
      expect(await dump()).not.toContain(secret);
      // A later change that leaves the key out keeps it.
      await req("PATCH", `/v1/account/chatbots/${bot.chatbot_id}`, admin, {
        agent: { kind: "openai_compatible", base_url: llm.url, model: "shop-model-2" },
      });
      const t = await issueTokens(s.url, { ...a, chatbotId: bot.chatbot_id }, "own-model-user");
      const sent = await send(s.url, t.access_token, "Hello?");
      expect(sent.reply?.content).toBe("From your own model.");
      expect(llm.requests.at(-1)?.authorization).toBe(`Bearer ${secret}`);
      expect(llm.requests.at(-1)?.body.model).toBe("shop-model-2");
    } finally {
      await llm.close();
    }
  });

  it("disables a chatbot: no new tokens, and its customers' live tokens stop at once", async () => {
    const bot = (
      await req("POST", "/v1/account/chatbots", admin, { name: "Old", allowed_origins: ["https://shop.example"] })
    ).body.data;
    const t = await issueTokens(s.url, { ...a, chatbotId: bot.chatbot_id }, "old-user");
    expect((await req("POST", `/v1/account/chatbots/${bot.chatbot_id}/disable`, admin, {})).body.data.active).toBe(
      false,
    );
    const frame = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(frame.status).toBe(401);
    const issue = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "old-user",
      chatbot_id: bot.chatbot_id,
      client_api_key: a.apiKey,
    });
    expect(issue.status).toBe(401);
  });
});

describe("team", () => {
  it("invites a person with a one-time link that works once, and lets them sign in as themself", async () => {
    const inv = await req("POST", "/v1/account/members", admin, { email: "Sam@Shop.example", role: "operator" });
    expect(inv.status).toBe(200);
    const { invitation_code: code, invitation_url: url, member } = inv.body.data;
    expect(member).toMatchObject({ email: "Sam@Shop.example", role: "operator", status: "invited", owner: false });
    // A whole address to paste into an e-mail: the public address when configured, else the server's own.
    expect(url).toBe(`${s.url}/console/invitation#code=${code}`);
    expect(await dump()).not.toContain(code);
    // Not a person yet: no sign-in before the invitation is accepted.
    expect((await postJson(s.url, "/get_id_token", { user_email_id: "sam@shop.example", password: "" })).status).toBe(
      400,
    );
    const ok = await postJson(s.url, "/v1/invitations/accept", { invitation_code: code, password: "sams password" });
    expect(ok.status).toBe(200);
    expect(ok.body.data.status).toBe("active");
    const again = await postJson(s.url, "/v1/invitations/accept", { invitation_code: code, password: "another one" });
    expect(again.status).toBe(401);
    expect(reasonOf(again.body)).toBe("InvitationInvalidError");
    const signIn = await postJson(s.url, "/get_id_token", {
      user_email_id: "sam@shop.example",
      password: "sams password",
    });
    expect(signIn.status).toBe(200);
    const me = await req("GET", "/v1/account", { authorization: `Bearer ${signIn.body.data.idToken}` });
    expect(me.body.data).toMatchObject({ email: a.email, caller_email: "Sam@Shop.example", caller_role: "operator" });
    expect(await dump()).not.toContain("sams password");
  });

  it("an invitation expires", async () => {
    const inv = await req("POST", "/v1/account/members", admin, { email: "late@shop.example", role: "admin" });
    const code = inv.body.data.invitation_code;
    await later(7 * 24 * 3600 * 1000 + 1, async () => {
      const r = await postJson(s.url, "/v1/invitations/accept", { invitation_code: code, password: "too late now" });
      expect(r.status).toBe(401);
    });
    // Just before its end it still worked (the same code, accepted now).
    const ok = await postJson(s.url, "/v1/invitations/accept", { invitation_code: code, password: "in time now" });
    expect(ok.status).toBe(200);
  });

  it("an e-mail belongs to one account; the owner cannot be removed; nobody changes their own role", async () => {
    const b = await s.account();
    const other = { authorization: `Bearer ${await idToken(s.url, b)}` };
    await addMember(s.url, admin.authorization!.slice(7), "only-one@shop.example");
    // Another account's invitation is answered as any other (test/api/invitations.test.ts); it fails at acceptance.
    const dup = await req("POST", "/v1/account/members", other, { email: "ONLY-one@shop.example", role: "admin" });
    expect(dup.status).toBe(200);
    const code = dup.body.data.invitation_code;
    expect(
      (await postJson(s.url, "/v1/invitations/accept", { invitation_code: code, password: "b's pw!" })).status,
    ).toBe(400);
    const ownerGone = await req("DELETE", `/v1/account/members/${a.accountId}`, admin);
    expect(ownerGone.status).toBe(403);
    const lead = await addMember(s.url, admin.authorization!.slice(7), "lead@shop.example", "admin");
    const self = await req(
      "PATCH",
      `/v1/account/members/${lead.memberId}`,
      { authorization: `Bearer ${lead.idToken}` },
      { role: "operator" },
    );
    expect(self.status).toBe(403);
  });

  it("a role change and a removal take effect on the member's next call", async () => {
    const m = await addMember(s.url, admin.authorization!.slice(7), "kim@shop.example", "operator");
    const kim = { authorization: `Bearer ${m.idToken}` };
    expect((await req("GET", "/v1/account/chatbots", kim)).status).toBe(403);
    await req("PATCH", `/v1/account/members/${m.memberId}`, admin, { role: "admin" });
    expect((await req("GET", "/v1/account/chatbots", kim)).status).toBe(200);
    const members = (await req("GET", "/v1/account/members", admin)).body.data.members;
    expect(members[0]).toMatchObject({ email: a.email, owner: true, role: "admin" });
    expect(members.find((x: { email: string }) => x.email === "kim@shop.example").role).toBe("admin");
    expect((await req("DELETE", `/v1/account/members/${m.memberId}`, admin)).status).toBe(200);
    expect((await req("GET", "/v1/account", kim)).status).toBe(401);
  });

  it("changes a person's own password; the wrong current one is refused", async () => {
    const m = await addMember(s.url, admin.authorization!.slice(7), "pw@shop.example", "operator");
    const auth = { authorization: `Bearer ${m.idToken}` };
    const wrong = await req("POST", "/v1/account/password", auth, {
      current_password: "not it at all",
      new_password: "a new password",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain("current_password");
    const ok = await req("POST", "/v1/account/password", auth, {
      current_password: m.password,
      new_password: "a new password",
    });
    expect(ok.status).toBe(200);
    const signIn = await postJson(s.url, "/get_id_token", { user_email_id: m.email, password: "a new password" });
    expect(signIn.status).toBe(200);
    expect((await postJson(s.url, "/get_id_token", { user_email_id: m.email, password: m.password })).status).toBe(401);
  });

  it("a conversation is taken over only by a person of its account, by default the caller", async () => {
    const t = await issueTokens(s.url, a, "handover-user");
    const conversationId = (await send(s.url, t.access_token, "A person please")).conversation_id;
    const b = await s.account();
    const stranger = await addMember(s.url, await idToken(s.url, b), "stranger@other.example");
    const refused = await postJson(
      s.url,
      "/take_over_conversation",
      { conversation_id: conversationId, operator_email: stranger.email },
      admin,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain("operator_email");
    const op = await addMember(s.url, admin.authorization!.slice(7), "desk@shop.example");
    const mine = await postJson(
      s.url,
      "/take_over_conversation",
      { conversation_id: conversationId },
      { authorization: `Bearer ${op.idToken}` },
    );
    expect(mine.status).toBe(200);
    expect(mine.body.data.assigned_to).toBe("desk@shop.example");
  });
});

describe("sessions", () => {
  it("revokes a customer's sessions: the refresh token and the live access token stop at once", async () => {
    const t = await issueTokens(s.url, a, "leaving-user");
    const r = await req("POST", "/v1/account/sessions/revoke", admin, { user_id: "leaving-user" });
    expect(r.status).toBe(200);
    expect(r.body.data.revoked).toBe(1);
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token })).status).toBe(401);
    const refreshed = await postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "leaving-user",
      chatbot_id: a.chatbotId,
      refresh_token: t.refresh_token,
    });
    expect(refreshed.status).toBe(401);
    expect((await req("POST", "/v1/account/sessions/revoke", admin, {})).status).toBe(400);
  });

  it("another account's chatbot is not_found, and its customers' sessions live on", async () => {
    const b = await s.account();
    const t = await issueTokens(s.url, b, "b-user");
    const r = await req("POST", "/v1/account/sessions/revoke", admin, { chatbot_id: b.chatbotId });
    expect(r.status).toBe(404);
    // Revoking by user_id reaches only the caller's own account.
    await req("POST", "/v1/account/sessions/revoke", admin, { user_id: "b-user" });
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token })).status).toBe(200);
  });
});

describe("agent endpoints in production", () => {
  it("are refused when they would reach a private, loopback or link-local address; a public one is kept", async () => {
    const names: Record<string, string[]> = {
      "llm.internal.example": ["10.0.0.7"],
      "llm.public.example": ["93.184.216.34"],
    };
    const p = await startServer({
      env: { NODE_ENV: "production", AIAGENT_SECRETS: "a-test-secret-for-production-mode-0123456789" },
      overrides: { resolve: async (host) => names[host] ?? [], dispatch: false },
    });
    try {
      const b = await p.account();
      const auth = { authorization: `Bearer ${await idToken(p.url, b)}` };
      for (const base of ["https://llm.internal.example/v1", "https://127.0.0.1/v1", "https://169.254.169.254/v1"]) {
        const r = await requestJson(p.url, "PATCH", `/v1/account/chatbots/${b.chatbotId}`, auth, {
          agent: { kind: "openai_compatible", base_url: base, model: "m" },
        });
        expect(r.status, base).toBe(400);
        expect(r.body.message).toContain("agent.base_url");
      }
      expect((await requestJson(p.url, "GET", `/v1/account/chatbots/${b.chatbotId}`, auth)).body.data.agent.kind).toBe(
        "built_in",
      );
      const ok = await requestJson(p.url, "PATCH", `/v1/account/chatbots/${b.chatbotId}`, auth, {
        agent: { kind: "openai_compatible", base_url: "https://llm.public.example/v1", model: "m" },
      });
      expect(ok.status).toBe(200);
    } finally {
      await p.close(true);
    }
  });
});
