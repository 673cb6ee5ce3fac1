import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FrameCaller } from "../../src/domain/conversation/conversation-service.js";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

let s: TestServer;
let a: TestAccount;
let token: string;
let conversationId: string;
let frameToken: string;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const signal = new AbortController().signal;

beforeAll(async () => {
  s = await startServer();
  a = await s.account({
    knowledge: [{ title: "Shipping", url: "https://shop.example/shipping", snippet: "Parcels ship within two days." }],
  });
  token = await idToken(s.url, a);
  const t = await issueTokens(s.url, a, "shape-user", {
    contact_name: "Ada Lovelace",
    email: "ada@example.com",
    phone_number: "+44 20 7946 0000",
  });
  frameToken = t.access_token;
  const sent = await send(s.url, frameToken, "When does shipping happen?");
  conversationId = sent.conversation_id;
  await send(s.url, frameToken, "Thanks!", conversationId);
});
afterAll(() => s.close(true));

function checkContact(c: Record<string, unknown>) {
  expect(Object.keys(c).sort()).toEqual(
    [
      "assigned_to",
      "channels",
      "contact_id",
      "contact_name",
      "conversation_status",
      "email",
      "first_response_due_at",
      "first_response_status",
      "latest_conversation_id",
      "latest_message_time",
      "latest_message_preview",
      "latest_message_role",
      "chatbot_id",
      "chatbot_name",
      "phone_number",
      "priority",
      "snoozed_until",
      "unread_message_count",
      "user_id",
    ].sort(),
  );
  expect(c.contact_id).toMatch(UUID);
  for (const f of ["contact_name", "phone_number", "email", "conversation_status", "assigned_to"])
    expect(typeof c[f]).toBe("string");
  expect(c.unread_message_count).toMatch(/^\d+$/);
  expect(c.latest_message_time).toMatch(ISO);
  expect(Array.isArray(c.channels)).toBe(true);
  // The list shows the latest conversation's last message, on one line, and its chatbot.
  expect(c.chatbot_id).toMatch(UUID);
  expect(["user", "assistant", "operator"]).toContain(c.latest_message_role);
  expect(typeof c.latest_message_preview).toBe("string");
  expect((c.latest_message_preview as string).length).toBeGreaterThan(0);
  expect((c.latest_message_preview as string).length).toBeLessThanOrEqual(120);
  expect(c.latest_message_preview).not.toMatch(/\n/);
  // Its priority (issue 45): none until a person sets one.
  expect(c.priority).toBe("none");
}

function checkMessage(m: Record<string, unknown>) {
  expect(Object.keys(m).sort()).toEqual(
    [
      // The files sent with the message (issue 46), beside the documented fields.
      "attachments",
      // An operator reply's author (issue 45), "" for the others.
      "author_name",
      "content",
      "conversation_created_at",
      "conversation_id",
      "created_at",
      "documents",
      "message_id",
      "message_order",
      "role",
      "tool_calls",
    ].sort(),
  );
  expect(m.message_id).toMatch(UUID);
  expect(m.conversation_id).toMatch(UUID);
  expect(m.conversation_created_at).toMatch(ISO);
  expect(m.created_at).toMatch(ISO);
  expect(Number.isInteger(m.message_order)).toBe(true);
  expect(typeof m.content).toBe("string");
  expect(typeof m.tool_calls).toBe("string");
  expect(Array.isArray(m.documents)).toBe(true);
  expect(Array.isArray(m.attachments)).toBe(true);
}

describe("GET /get_contact_conversations", () => {
  it("answers the documented shape {data: {data: {contacts}}} with has_more beside the array", async () => {
    const r = await contacts(s.url, token, a.email);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(["data"]);
    expect(Object.keys(r.body.data)).toEqual(["data"]);
    expect(Object.keys(r.body.data.data).sort()).toEqual(["contacts", "has_more"]);
    expect(r.body.data.data.has_more).toBe(false);
    const [c] = r.body.data.data.contacts;
    checkContact(c);
    // The preview is the latest conversation's last message, and the chatbot is its chatbot.
    const all = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: conversationId, limit: 100 },
      { authorization: `Bearer ${token}` },
    );
    const last = all.body.messages.at(-1);
    expect(c.latest_message_role).toBe(last.role);
    expect(last.content.replace(/\s+/g, " ").trim().startsWith(c.latest_message_preview.replace(/…$/, ""))).toBe(true);
    expect(c.chatbot_id).toBe(a.chatbotId);
    // And its name, which an operator, who may not list the account's chatbots, reads here (issue 45).
    expect(c.chatbot_name).toBe("Test bot");
    expect(c).toMatchObject({
      contact_name: "Ada Lovelace",
      email: "ada@example.com",
      phone_number: "+44 20 7946 0000",
      conversation_status: "live",
      assigned_to: "ai_agent",
      unread_message_count: "2",
      channels: ["web"],
      user_id: "shape-user",
    });
  });

  it("is the same data over Connect JSON and Connect binary (typed fields)", async () => {
    for (const protocol of ["connect-json", "connect-binary"] as const) {
      const { conversations } = rpcClients(s.url, protocol);
      const r = await conversations.getContactConversations(
        { userEmailId: a.email },
        { headers: { authorization: `Bearer ${token}` } },
      );
      const c = r.data!.data!.contacts[0]!;
      expect(c.unreadMessageCount).toBe("2");
      expect(c.latestMessageTime).toMatch(ISO);
      expect(c.contactName).toBe("Ada Lovelace");
      expect(r.data!.data!.hasMore).toBe(false);
    }
  });

  it("can be called with HTTP GET over the Connect protocol (side-effect-free)", async () => {
    const msg = encodeURIComponent(JSON.stringify({ userEmailId: a.email }));
    const r = await fetch(
      `${s.url}/aiagent.v1.ConversationService/GetContactConversations?connect=v1&encoding=json&message=${msg}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as { data: { data: { contacts: unknown[] } } };
    expect(body.data.data.contacts).toHaveLength(1);
  });
});

describe("GET /get_messages_for_conversation", () => {
  it("answers {messages, has_more} in message_order, for the frame's access token", async () => {
    const r = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: frameToken,
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["has_more", "messages"]);
    expect(r.body.messages.map((m: { message_order: number }) => m.message_order)).toEqual([1, 2, 3, 4]);
    for (const m of r.body.messages) checkMessage(m);
    expect(r.body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    // The documented title, url and snippet, and beside them where the passage came from (issue 42).
    expect(r.body.messages[1].documents).toEqual([
      {
        title: "Shipping",
        url: "https://shop.example/shipping",
        snippet: "Parcels ship within two days.",
        source_id: "",
        source_title: "Shipping",
        anchor_url: "https://shop.example/shipping",
        heading_path: "",
        excerpt: "Parcels ship within two days.",
        score: expect.any(Number),
        knowledge_version: 0,
      },
    ]);
    expect(r.body.messages[0].conversation_created_at).toBe(r.body.messages[3].conversation_created_at);
  });

  it("answers the owning account's ID token too, and over Connect and gRPC", async () => {
    const r = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: conversationId },
      { authorization: `Bearer ${token}` },
    );
    expect(r.body.messages).toHaveLength(4);
    for (const protocol of ["connect-json", "connect-binary", "grpc"] as const) {
      const { conversations } = rpcClients(s.url, protocol);
      const m = await conversations.getMessagesForConversation({ conversationId, accessToken: frameToken, limit: 2 });
      expect(m.messages.map((x) => x.messageOrder)).toEqual([1, 2]);
      expect(m.hasMore).toBe(true);
    }
  });

  it("pages with limit and offset; defaults to 20", async () => {
    const long = await issueTokens(s.url, a, "chatty");
    const first = await send(s.url, long.access_token, "message 1");
    for (let i = 2; i <= 12; i++) await send(s.url, long.access_token, `message ${i}`, first.conversation_id);
    const all = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: first.conversation_id,
      access_token: long.access_token,
    });
    expect(all.body.messages).toHaveLength(20);
    expect(all.body.has_more).toBe(true);
    const rest = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: first.conversation_id,
      access_token: long.access_token,
      offset: 20,
    });
    expect(rest.body.messages.map((m: { message_order: number }) => m.message_order)).toEqual([21, 22, 23, 24]);
    expect(rest.body.has_more).toBe(false);
    const mid = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: first.conversation_id,
      access_token: long.access_token,
      offset: 5,
      limit: 3,
    });
    expect(mid.body.messages.map((m: { message_order: number }) => m.message_order)).toEqual([6, 7, 8]);
    const max = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: first.conversation_id,
      access_token: long.access_token,
      limit: 100,
    });
    expect(max.body.messages).toHaveLength(24);
  });
});

describe("bounds are enforced, never clamped", () => {
  const cases: [string, Record<string, string>, string][] = [
    ["limit 0", { limit: "0" }, "limit"],
    ["limit 101", { limit: "101" }, "limit"],
    ["limit -1", { limit: "-1" }, "limit"],
    ["limit abc", { limit: "abc" }, "limit"],
    ["limit 1.5", { limit: "1.5" }, "limit"],
    ["empty limit", { limit: "" }, "limit"],
    ["offset -1", { offset: "-1" }, "offset"],
    ["offset 2.5", { offset: "2.5" }, "offset"],
    ["duplicate limit", { limit: "5&limit=6" }, "limit"],
  ];
  for (const [name, q, field] of cases) {
    it(`contacts: ${name} → invalid_argument naming ${field}`, async () => {
      const qs = Object.entries(q)
        .map(([k, v]) => `${k}=${v}`)
        .join("&");
      const r = await fetch(`${s.url}/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}&${qs}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = (await r.json()) as { code: string; message: string };
      expect(r.status).toBe(400);
      expect(body.code).toBe("invalid_argument");
      expect(body.message.startsWith(field)).toBe(true);
    });
    it(`messages: ${name} → invalid_argument naming ${field}`, async () => {
      const qs = Object.entries(q)
        .map(([k, v]) => `${k}=${v}`)
        .join("&");
      const r = await fetch(
        `${s.url}/get_messages_for_conversation?conversation_id=${conversationId}&access_token=${frameToken}&${qs}`,
      );
      const body = (await r.json()) as { code: string; message: string };
      expect(r.status).toBe(400);
      expect(body.message.startsWith(field)).toBe(true);
    });
  }

  it("limit 1 and 100 are accepted", async () => {
    expect((await contacts(s.url, token, a.email, { limit: 1 })).status).toBe(200);
    expect((await contacts(s.url, token, a.email, { limit: 100 })).status).toBe(200);
  });

  it("an unknown filter, a malformed conversation_id and an unknown parameter are named", async () => {
    const f = await contacts(s.url, token, a.email, { filter: "everything" });
    expect(f.status).toBe(400);
    expect(f.body.message).toContain("filter");
    const id = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: "1234",
      access_token: frameToken,
    });
    expect(id.status).toBe(400);
    expect(id.body.message).toContain("conversation_id");
    const extra = await contacts(s.url, token, a.email, { page: 2 });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toContain("page");
    const notEmail = await contacts(s.url, token, "not an e-mail");
    expect(notEmail.status).toBe(400);
    expect(notEmail.body.message.startsWith("user_email_id")).toBe(true);
    const none = await getJson(s.url, "/get_contact_conversations", {}, { authorization: `Bearer ${token}` });
    expect(none.status).toBe(400);
    expect(none.body.message).toContain("user_email_id");
  });

  it("Connect callers get the same bounds", async () => {
    const { conversations } = rpcClients(s.url, "connect-binary");
    const err = await conversations
      .getContactConversations({ userEmailId: a.email, limit: 0 }, { headers: { authorization: `Bearer ${token}` } })
      .catch((e: Error) => e);
    expect((err as Error).message).toContain("limit");
  });
});

describe("paging through many contacts", () => {
  it("with limit 7 visits each of 250 contacts exactly once, newest activity first; has_more false only on the last page", async () => {
    const b = await s.account();
    const bToken = await idToken(s.url, b);
    for (let i = 0; i < 250; i++) {
      const caller: FrameCaller = {
        kind: "frame",
        accountId: b.accountId,
        chatbotId: b.chatbotId,
        userId: `user-${i}`,
      };
      s.clock.advance(1000);
      await s.app.conversations.messages.send(caller, { conversationId: "", content: `hello from ${i}` }, signal);
    }
    const seen: { id: string; time: string }[] = [];
    for (let offset = 0, page = 0; page < 60; page++, offset += 7) {
      const r = await contacts(s.url, bToken, b.email, { limit: 7, offset });
      expect(r.status).toBe(200);
      const list = r.body.data.data.contacts as { contact_id: string; latest_message_time: string }[];
      seen.push(...list.map((c) => ({ id: c.contact_id, time: c.latest_message_time })));
      const last = offset + 7 >= 250;
      expect(r.body.data.data.has_more).toBe(!last);
      if (last) break;
    }
    expect(seen).toHaveLength(250);
    expect(new Set(seen.map((c) => c.id)).size).toBe(250);
    const times = seen.map((c) => c.time);
    expect([...times].sort().reverse()).toEqual(times);
  });
});
