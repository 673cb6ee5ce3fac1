import { beforeAll, describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { contacts, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { countRows, selectRows } from "../helpers/rows.js";
import { NO_CUSTOMER_LIMITS } from "../helpers/server.js";

// 50 concurrent sends of one customer: the customer limits are off.
const fx = serverForFile({ server: { env: NO_CUSTOMER_LIMITS }, accounts: 2, idTokens: true });
let aliceToken: string;
let aliceConv: string;

beforeAll(async () => {
  aliceToken = (await issueTokens(fx.s.url, fx.a, "alice")).access_token;
  aliceConv = (await send(fx.s.url, aliceToken, "my private question")).conversation_id;
});

describe("who may read what", () => {
  it("another account's ID token cannot list this account's contacts: permission_denied, never saying whether it exists", async () => {
    const r = await contacts(fx.s.url, fx.idB, fx.a.email);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe("permission_denied");
    const ghost = await contacts(fx.s.url, fx.idB, "nobody@nowhere.example");
    expect(ghost.status).toBe(403);
    expect(ghost.body).toEqual(r.body);
  });

  it("another account's ID token cannot read this account's conversation: not_found, same as a missing one", async () => {
    const r = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: aliceConv },
      { authorization: `Bearer ${fx.idB}` },
    );
    const missing = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: crypto.randomUUID() },
      { authorization: `Bearer ${fx.idB}` },
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
      const w = await postJson(fx.s.url, path, { conversation_id: aliceConv }, { authorization: `Bearer ${fx.idB}` });
      expect(w.status, path).toBe(404);
    }
    const reply = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: aliceConv, content: "hijack" },
      { authorization: `Bearer ${fx.idB}` },
    );
    expect(reply.status).toBe(404);
  });

  it("one customer's frame token cannot read or continue another customer's conversation", async () => {
    const mallory = (await issueTokens(fx.s.url, fx.a, "mallory")).access_token;
    const r = await getJson(fx.s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: mallory,
    });
    expect(r.status).toBe(404);
    const w = await postJson(fx.s.url, `/ai_agent/send_message?access_token=${mallory}`, {
      conversation_id: aliceConv,
      content: "let me in",
    });
    expect(w.status).toBe(404);
    const own = await getJson(fx.s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: aliceToken,
    });
    expect(own.body.messages.map((m: { content: string }) => m.content)).not.toContain("let me in");
  });

  it("the same customer through another chatbot cannot read the conversation", async () => {
    const other = await fx.s.app.accounts.createChatbot(fx.a.email, "Second bot", ["https://shop.example"]);
    const t = await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: "alice",
      chatbot_id: other.chatbotId,
      client_api_key: fx.a.apiKey,
    });
    const r = await getJson(fx.s.url, "/get_messages_for_conversation", {
      conversation_id: aliceConv,
      access_token: t.body.data.access_token,
    });
    expect(r.status).toBe(404);
  });

  it("the owning account reads it with its ID token", async () => {
    const r = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: aliceConv },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(r.status).toBe(200);
    expect(r.body.messages[0].content).toBe("my private question");
  });

  it("no credential → unauthenticated", async () => {
    const m = await getJson(fx.s.url, "/get_messages_for_conversation", { conversation_id: aliceConv });
    expect(m.status).toBe(401);
    expect(m.body.code).toBe("unauthenticated");
    const c = await getJson(fx.s.url, "/get_contact_conversations", { user_email_id: fx.a.email });
    expect(c.status).toBe(401);
    const w = await postJson(fx.s.url, "/ai_agent/send_message", { content: "hi" });
    expect(w.status).toBe(401);
    const junk = await getJson(
      fx.s.url,
      "/get_contact_conversations",
      { user_email_id: fx.a.email },
      { authorization: "Bearer not.a.jwt" },
    );
    expect(junk.status).toBe(401);
    const scheme = await getJson(
      fx.s.url,
      "/get_contact_conversations",
      { user_email_id: fx.a.email },
      { authorization: `Basic ${fx.idA}` },
    );
    expect(scheme.status).toBe(401);
  });
});

describe("concurrent writes", () => {
  it("50 concurrent send_message calls on one conversation leave message_order 1..N with no gap and every acknowledged message stored", async () => {
    const t = (await issueTokens(fx.s.url, fx.a, "busy")).access_token;
    const conv = (await send(fx.s.url, t, "start")).conversation_id;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        postJson(fx.s.url, `/ai_agent/send_message?access_token=${t}`, {
          conversation_id: conv,
          content: `parallel ${i}`,
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(50);
    const orders: number[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await getJson(fx.s.url, "/get_messages_for_conversation", {
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
        await selectRows<{ message_id: string }>(
          fx.s.app,
          "SELECT message_id FROM messages WHERE conversation_id = ?",
          [conv],
        )
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
    const t = (await issueTokens(fx.s.url, fx.a, "lister")).access_token;
    const c1 = (await send(fx.s.url, t, "first")).conversation_id;
    fx.s.clock.advance(1000);
    const c2 = (await send(fx.s.url, t, "second")).conversation_id;
    const r = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t });
    expect(r.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([c2, c1]);
    expect(r.body.data.conversations[0]).toMatchObject({ status: "live", assigned_to: "ai_agent", channel: "web" });
  });

  it("send_message refuses empty or over-long content and a malformed conversation_id, storing nothing", async () => {
    const t = (await issueTokens(fx.s.url, fx.a, "validator")).access_token;
    const count = () => countRows(fx.s.app, "SELECT count(*) AS n FROM messages");
    const before = await count();
    for (const body of [
      { content: "" },
      { content: "   " },
      { content: "x".repeat(8001) },
      { content: "hi", conversation_id: "abc" },
      { content: 7 },
    ]) {
      const r = await postJson(fx.s.url, `/ai_agent/send_message?access_token=${t}`, body);
      expect(r.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(r.body.code).toBe("invalid_argument");
    }
    expect(await count()).toBe(before);
  });
});
