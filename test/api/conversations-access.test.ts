import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { countRows, selectRows } from "../helpers/rows.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestAccount, type TestServer } from "../helpers/server.js";

let s: TestServer;
let a: TestAccount;
let b: TestAccount;
let aToken: string;
let bToken: string;
let aliceToken: string;
let aliceConv: string;

beforeAll(async () => {
  // 50 concurrent sends of one customer: the customer limits are off.
  s = await startServer({ env: NO_CUSTOMER_LIMITS });
  a = await s.account();
  b = await s.account();
  aToken = await idToken(s.url, a);
  bToken = await idToken(s.url, b);
  aliceToken = (await issueTokens(s.url, a, "alice")).access_token;
  aliceConv = (await send(s.url, aliceToken, "my private question")).conversation_id;
});
afterAll(() => s.close(true));

describe("who may read what", () => {
  it("another account's ID token cannot list this account's contacts: permission_denied, never saying whether it exists", async () => {
    const r = await contacts(s.url, bToken, a.email);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("permission_denied");
    const ghost = await contacts(s.url, bToken, "nobody@nowhere.example");
    expect(ghost.status).toBe(403);
    expect(ghost.body).toEqual(r.body);
  });

  it("another account's ID token cannot read this account's conversation: not_found, same as a missing one", async () => {
    const r = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: aliceConv },
      { authorization: `Bearer ${bToken}` },
    );
    const missing = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: crypto.randomUUID() },
      { authorization: `Bearer ${bToken}` },
    );
    expect(r.status).toBe(404);
    expect(r.body.code).toBe("not_found");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(r.body);
    for (const path of [
      "/mark_conversation_read",
      "/mark_conversation_unread",
      "/take_over_conversation",
      "/close_conversation",
      "/reopen_conversation",
    ]) {
      const w = await postJson(s.url, path, { conversation_id: aliceConv }, { authorization: `Bearer ${bToken}` });
      expect(w.status, path).toBe(404);
    }
    const reply = await postJson(
      s.url,
      "/reply_to_conversation",
      { conversation_id: aliceConv, content: "hijack" },
      { authorization: `Bearer ${bToken}` },
    );
    expect(reply.status).toBe(404);
  });

  it("one customer's frame token cannot read or continue another customer's conversation", async () => {
    const mallory = (await issueTokens(s.url, a, "mallory")).access_token;
    const r = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: mallory,
    });
    expect(r.status).toBe(404);
    const w = await postJson(s.url, `/ai_agent/send_message?access_token=${mallory}`, {
      conversation_id: aliceConv,
      content: "let me in",
    });
    expect(w.status).toBe(404);
    const own = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: aliceToken,
    });
    expect(own.body.messages.map((m: { content: string }) => m.content)).not.toContain("let me in");
  });

  it("the same customer through another chatbot cannot read the conversation", async () => {
    const other = await s.app.accounts.createChatbot(a.email, "Second bot", ["https://shop.example"]);
    const t = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "alice",
      chatbot_id: other.chatbotId,
      client_api_key: a.apiKey,
    });
    const r = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: t.body.data.access_token,
    });
    expect(r.status).toBe(404);
  });

  it("the owning account reads it with its ID token", async () => {
    const r = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: aliceConv },
      { authorization: `Bearer ${aToken}` },
    );
    expect(r.status).toBe(200);
    expect(r.body.messages[0].content).toBe("my private question");
  });

  it("no credential → unauthenticated", async () => {
    const m = await getJson(s.url, "/get_messages_for_conversation", { conversation_id: aliceConv });
    expect(m.status).toBe(401);
    expect(m.body.code).toBe("unauthenticated");
    const c = await getJson(s.url, "/get_contact_conversations", { user_email_id: a.email });
    expect(c.status).toBe(401);
    const w = await postJson(s.url, "/ai_agent/send_message", { content: "hi" });
    expect(w.status).toBe(401);
    const junk = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email },
      { authorization: "Bearer not.a.jwt" },
    );
    expect(junk.status).toBe(401);
    const scheme = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email },
      { authorization: `Basic ${aToken}` },
    );
    expect(scheme.status).toBe(401);
  });
});

describe("concurrent writes", () => {
  it("50 concurrent send_message calls on one conversation leave message_order 1..N with no gap and every acknowledged message stored", async () => {
    const t = (await issueTokens(s.url, a, "busy")).access_token;
    const conv = (await send(s.url, t, "start")).conversation_id;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postJson(s.url, `/ai_agent/send_message?access_token=${t}`, {
          conversation_id: conv,
          content: `parallel ${i}`,
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(50);
    const orders: number[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await getJson(s.url, "/get_messages_for_conversation", {
        conversation_id: conv,
        access_token: t,
        limit: 100,
        offset,
      });
      orders.push(...page.body.messages.map((m: { message_order: number }) => m.message_order));
      if (!page.body.has_more) break;
    }
    expect(orders).toEqual(Array.from({ length: orders.length }, (_, i) => i + 1));
    expect(orders.length).toBe(2 + 50 * 2);
    const stored = new Set(
      (
        await selectRows<{ message_id: string }>(s.app, "SELECT message_id FROM messages WHERE conversation_id = ?", [
          conv,
        ])
      ).map((r) => r.message_id),
    );
    for (const r of ok) {
      expect(stored.has(r.body.data.user_message.message_id)).toBe(true);
      expect(stored.has(r.body.data.reply.message_id)).toBe(true);
    }
  });
});

describe("the frame's own list and writes", () => {
  it("lists only the frame user's conversations with this chatbot, newest first", async () => {
    const t = (await issueTokens(s.url, a, "lister")).access_token;
    const c1 = (await send(s.url, t, "first")).conversation_id;
    s.clock.advance(1000);
    const c2 = (await send(s.url, t, "second")).conversation_id;
    const r = await getJson(s.url, "/ai_agent/conversations", { access_token: t });
    expect(r.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([c2, c1]);
    expect(r.body.data.conversations[0]).toMatchObject({ status: "live", assigned_to: "ai_agent", channel: "web" });
  });

  it("send_message refuses empty or over-long content and a malformed conversation_id, storing nothing", async () => {
    const t = (await issueTokens(s.url, a, "validator")).access_token;
    const count = () => countRows(s.app, "SELECT count(*) AS n FROM messages");
    const before = await count();
    for (const body of [
      { content: "" },
      { content: "   " },
      { content: "x".repeat(8001) },
      { content: "hi", conversation_id: "abc" },
      { content: 7 },
    ]) {
      const r = await postJson(s.url, `/ai_agent/send_message?access_token=${t}`, body);
      expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(r.body.code).toBe("invalid_argument");
    }
    expect(await count()).toBe(before);
  });
});
