import { describe, expect, it } from "vitest";
import { dbChecksum } from "../hardening/support.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { sqliteDb } from "../helpers/sqlite.js";

// Issue 47's small defects of the JSON routes, each refused naming the field, and changing nothing: null is never a
// value, an empty key names the body, a body id that disagrees with the path, an empty id in the query, and a
// malformed API key id named as the route names it.
const fx = serverForFile({ accounts: 2, idTokens: true });

const fieldOf = (body: { details?: { debug?: { metadata?: { field?: string } } }[] }) =>
  body.details?.[0]?.debug?.metadata?.field;

/** Nothing written (on SQLite, where the checksum reads the file; elsewhere the answers are what is checked). */
async function unchanged(action: () => Promise<void>): Promise<void> {
  const sqlite = process.env.AIAGENT_TEST_BACKEND === undefined;
  const before = sqlite ? dbChecksum(sqliteDb(fx.s.app)) : "";
  await action();
  if (sqlite) expect(dbChecksum(sqliteDb(fx.s.app))).toBe(before);
}

describe("null is refused on every JSON route, naming the field", () => {
  it('{"name":null} on a chatbot update is 400 naming name, and the name stays', async () => {
    await unchanged(async () => {
      const r = await requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, fx.authA, {
        name: null,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.code).toBe("invalid_argument");
      expect(fieldOf(r.body)).toBe("name");
      expect(r.body.message).toMatch(/^name: must not be null/);
    });
  });

  it('{"days":null} does not turn retention off: 400 naming days, the period is kept', async () => {
    const path = `/v1/account/chatbots/${fx.a.chatbotId}/retention`;
    expect((await postJson(fx.s.url, path, { days: 30 }, fx.authA)).status).toBe(200);
    await unchanged(async () => {
      const r = await postJson(fx.s.url, path, { days: null }, fx.authA);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(fieldOf(r.body)).toBe("days");
    });
    const policies = await fx.s.app.store.privacy.retentionPolicies();
    expect(policies.find((p) => p.chatbotId === fx.a.chatbotId)?.days).toBe(30);
  });

  it("a nested null names its path, and a token route refuses it too", async () => {
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "u-null",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
      contact: { contact_name: null },
    });
    expect(r.status).toBe(400);
    expect(fieldOf(r.body)).toBe("contact.contact_name");
  });
});

describe("an empty JSON key", () => {
  it("is 400 naming the object it stands in", async () => {
    const top = await requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, fx.authA, { "": 1 });
    expect(top.status).toBe(400);
    expect(fieldOf(top.body)).toBe("body");
    const nested = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "u",
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
      contact: { "": "x" },
    });
    expect(nested.status).toBe(400);
    expect(fieldOf(nested.body)).toBe("contact");
  });
});

describe("a body id that disagrees with the path id", () => {
  it("PATCH chatbot A with body chatbot_id B is 400 naming chatbot_id; A keeps its name", async () => {
    const before = (await fx.s.app.store.chatbots.byId(fx.a.chatbotId))!.name;
    for (const other of [fx.b.chatbotId, "00000000-0000-4000-8000-000000000000"]) {
      const r = await requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, fx.authA, {
        chatbot_id: other,
        name: "renamed through another id",
      });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(fieldOf(r.body)).toBe("chatbot_id");
    }
    expect((await fx.s.app.store.chatbots.byId(fx.a.chatbotId))!.name).toBe(before);
    // The same id in both places is no disagreement.
    const same = await requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, fx.authA, {
      chatbot_id: fx.a.chatbotId,
      name: "Same id",
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body.data.name).toBe("Same id");
  });
});

describe("empty query values", () => {
  it("an empty id is refused like an empty limit; an empty search is the empty text", async () => {
    for (const [q, field] of [
      ["chatbot_id=", "chatbot_id"],
      ["limit=", "limit"],
    ] as const) {
      const r = await fetch(`${fx.s.url}/v1/account/sessions?${q}`, { headers: fx.authA });
      const body = (await r.json()) as Parameters<typeof fieldOf>[0];
      expect(r.status, q).toBe(400);
      expect(fieldOf(body), q).toBe(field);
    }
    const search = await getJson(
      fx.s.url,
      "/get_contact_conversations",
      { user_email_id: fx.a.email, search: "" },
      fx.authA,
    );
    expect(search.status).toBe(200);
  });
});

describe("revoking an API key", () => {
  it("a malformed id is 400 naming api_key_id, as the route names it", async () => {
    const r = await postJson(fx.s.url, "/v1/account/api_keys/not-a-uuid/revoke", {}, fx.authA);
    expect(r.status).toBe(400);
    expect(fieldOf(r.body)).toBe("api_key_id");
    expect(r.body.message).toMatch(/^api_key_id: /);
  });
});

describe("a revoked API key (issue 47)", () => {
  it("answers TokenRevokedError naming the key, not the chatbot id; an unknown key stays TokenInvalidError", async () => {
    const c = await fx.s.account();
    const cAuth = { authorization: `Bearer ${await idToken(fx.s.url, c)}` };
    const keys = await getJson(fx.s.url, "/v1/account/api_keys", {}, cAuth);
    const keyId = keys.body.data.api_keys[0].api_key_id as string;
    expect((await postJson(fx.s.url, `/v1/account/api_keys/${keyId}/revoke`, {}, cAuth)).status).toBe(200);
    const body = { user_id: "u-revoked", chatbot_id: c.chatbotId, client_api_key: c.apiKey };
    const r = await postJson(fx.s.url, "/ai_agent/get_access_token", body);
    expect(r.status).toBe(401);
    expect(r.body.details[0].debug.reason).toBe("TokenRevokedError");
    expect(r.body.message).toContain("client_api_key has been revoked");
    expect(r.body.message).not.toContain("chatbot_id");
    const id = await postJson(fx.s.url, "/get_id_token", { user_email_id: c.email, client_api_key: c.apiKey });
    expect(id.body.details[0].debug.reason).toBe("TokenRevokedError");
    const unknown = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      ...body,
      client_api_key: `cak_${"A".repeat(43)}`,
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body.details[0].debug.reason).toBe("TokenInvalidError");
  });
});
