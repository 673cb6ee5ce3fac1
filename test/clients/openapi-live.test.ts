import { readFileSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeWaitingCall } from "../helpers/approvals.js";
import { idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { discPng } from "../helpers/png.js";
import { startServer, type TestAccount, type TestServer, UNANSWERED_RELAY } from "../helpers/server.js";
import { resolve, schemaErrors } from "./schema-check.js";

// Every documented route is called on a live server, once to succeed and once to fail, and each real body
// is checked against the document's schema for that status: the document describes what the server writes.
const doc = JSON.parse(readFileSync("gen/openapi/aiagent.v1.openapi.json", "utf8"));

interface Sent {
  /** Values of the path's {variables}. */
  path?: Record<string, string>;
  query?: Record<string, string | number>;
  body?: unknown;
  bearer?: string;
  /** Send the request body as is, without checking it against the documented request schema (for bad input). */
  raw?: boolean;
  /** Other request headers (the console's CSRF header). */
  headers?: Record<string, string>;
}
type Case = { ok: () => Sent | Promise<Sent>; fail: () => Sent | Promise<Sent>; failStatus: number };

let s: TestServer;
let a: TestAccount;
let other: TestAccount;
let access: string;
let refresh: string;
let id: string;
let otherId: string;
let conversationId: string;
const USER = "openapi-user";
/** A knowledge source of one snippet, as CreateKnowledgeSource and AddAgentDraftSource take it. */
const snippetsSource = (title: string, snippet: string) => ({
  kind: "snippets",
  snippets: [{ title, url: `https://shop.example/${title.toLowerCase()}`, snippet }],
});

const MISSING = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  // With a relay, so that /send_transcript queues.
  s = await startServer({ env: UNANSWERED_RELAY });
  a = await s.account({
    knowledge: [{ title: "Shipping", url: "https://example.com/shipping", snippet: "We ship in two days." }],
  });
  other = await s.account();
  const t = await issueTokens(s.url, a, USER, {
    contact_name: "Grace Hopper",
    email: "grace@example.com",
    phone_number: "+15550100",
  });
  access = t.access_token;
  refresh = t.refresh_token;
  id = await idToken(s.url, a);
  otherId = await idToken(s.url, other);
  conversationId = (await send(s.url, access, "How long does shipping take?")).conversation_id;
});
afterAll(() => s.close(true));

let invitations = 0;
/** A new invitation of account a: its member's id and its one-time code. */
async function invitation(): Promise<{ memberId: string; code: string }> {
  const owner = ownerOf(a);
  const inv = await s.app.team.invite(owner, `invited${++invitations}@openapi.example`, "operator");
  return { memberId: inv.member.memberId, code: inv.invitationCode };
}
const invited = async () => (await invitation()).memberId;

let savedReplies = 0;
let tools = 0;
/** A new tool of account a's chatbot: its id. */
async function agentTool(): Promise<string> {
  const r = await fetch(`${s.url}/v1/account/chatbots/${a.chatbotId}/tools`, {
    method: "POST",
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `tool_${++tools}`, description: "A tool.", url: "https://tools.example/x" }),
  });
  return ((await r.json()) as any).data.tool.tool_id;
}

/** A new knowledge source (snippets) of account a's chatbot: its id. */
async function knowledgeSource(): Promise<string> {
  const r = await fetch(`${s.url}/v1/account/chatbots/${a.chatbotId}/knowledge_sources`, {
    method: "POST",
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    body: JSON.stringify({
      kind: "snippets",
      snippets: [{ title: "Gift cards", url: "https://shop.example/gift", snippet: "Gift cards never expire." }],
    }),
  });
  return ((await r.json()) as any).data.source_id;
}

let labels = 0;
/** A new label of account a: its id. */
async function label(): Promise<string> {
  const r = await fetch(`${s.url}/v1/account/labels`, {
    method: "POST",
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `label ${++labels}` }),
  });
  return ((await r.json()) as any).data.label_id;
}

let teams = 0;
/** A new team of account a: its id. */
async function team(): Promise<string> {
  const r = await fetch(`${s.url}/v1/account/teams`, {
    method: "POST",
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `team ${++teams}` }),
  });
  return ((await r.json()) as any).data.team_id;
}

/** A new saved reply of account a: its id. */
async function savedReply(): Promise<string> {
  const r = await fetch(`${s.url}/v1/account/saved_replies`, {
    method: "POST",
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    body: JSON.stringify({ shortcut: `reply${++savedReplies}`, content: "Hello!" }),
  });
  return ((await r.json()) as any).data.saved_reply_id;
}
const invitationCode = async () => (await invitation()).code;
/** Account a's chatbot with an agent draft: its id. */
async function drafted(): Promise<string> {
  await s.app.agentReplay.put(ownerOf(a), a.chatbotId, { instructions: "Draft." });
  return a.chatbotId;
}
/** A conversation of its own for the approvals (made on first use), which the AI agent keeps answering. */
let approvals: Promise<string> | undefined;
function approvalConversation(): Promise<string> {
  approvals ??= (async () =>
    (await send(s.url, (await issueTokens(s.url, a, "openapi-approvals")).access_token, "Refund?")).conversation_id)();
  return approvals;
}
/** A tool call waiting for approval in that conversation: its id. */
const waitingCall = async () => storeWaitingCall(s.app, a, await approvalConversation());
/** A webhook endpoint of account `a` with one delivery (made on first use). */
let hooked: Promise<{ endpointId: string; deliveryId: string }> | undefined;
function hook(): Promise<{ endpointId: string; deliveryId: string }> {
  hooked ??= (async () => {
    const auth = { authorization: `Bearer ${id}`, "content-type": "application/json" };
    const ep = await fetch(`${s.url}/v1/account/webhooks`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: "http://127.0.0.1:9/hooks", event_types: ["message.created"] }),
    });
    const endpointId = ((await ep.json()) as any).data.endpoint.endpoint_id as string;
    await send(s.url, access, "A message for the webhook", conversationId);
    const d = await fetch(`${s.url}/v1/account/webhooks/${endpointId}/deliveries`, { headers: auth });
    return { endpointId, deliveryId: ((await d.json()) as any).data.deliveries[0].delivery_id as string };
  })();
  return hooked;
}

/** The header the console's own script sends: the console's session RPCs need it. */
const CSRF = { "x-aiagent-csrf": "1" };

const cases: Record<string, Case> = {
  "POST /console/session": {
    ok: () => ({ body: { email: a.email, password: a.password }, headers: CSRF }),
    fail: () => ({ body: { email: a.email, password: "wrong password" }, headers: CSRF }),
    failStatus: 401,
  },
  "DELETE /console/session": {
    ok: () => ({ headers: CSRF }),
    fail: () => ({}),
    failStatus: 403,
  },
  "POST /v1/account/chatbots/{chatbot_id}/preview": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/webhooks": {
    ok: () => ({ body: { url: "http://127.0.0.1:9/created", event_types: ["conversation.closed"] }, bearer: id }),
    fail: () => ({ body: { url: "ftp://example.com/hooks" }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/webhooks": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: "not-a-token" }),
    failStatus: 401,
  },
  "PATCH /v1/account/webhooks/{endpoint_id}": {
    // The document lists the path's fields in the body too (body "*"): they are sent in both.
    ok: async () => {
      const endpoint_id = (await hook()).endpointId;
      return { path: { endpoint_id }, body: { endpoint_id, description: "inbox" }, bearer: id };
    },
    fail: () => ({ path: { endpoint_id: MISSING }, body: { endpoint_id: MISSING, description: "inbox" }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/webhooks/{endpoint_id}": {
    ok: async () => {
      const r = await fetch(`${s.url}/v1/account/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
        body: JSON.stringify({ url: "http://127.0.0.1:9/gone" }),
      });
      return { path: { endpoint_id: ((await r.json()) as any).data.endpoint.endpoint_id }, bearer: id };
    },
    fail: () => ({ path: { endpoint_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/webhooks/{endpoint_id}/rotate_secret": {
    ok: async () => {
      const endpoint_id = (await hook()).endpointId;
      return { path: { endpoint_id }, body: { endpoint_id }, bearer: id };
    },
    fail: () => ({ path: { endpoint_id: MISSING }, body: { endpoint_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "GET /v1/account/events": {
    ok: () => ({ query: { limit: 10, types: "message.created" }, bearer: id }),
    fail: () => ({ query: { after: "not-a-cursor" }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "GET /v1/account/webhooks/{endpoint_id}/deliveries": {
    ok: async () => ({ path: { endpoint_id: (await hook()).endpointId }, query: { limit: 5 }, bearer: id }),
    fail: () => ({ path: { endpoint_id: MISSING }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend": {
    ok: async () => {
      const h = await hook();
      const path = { endpoint_id: h.endpointId, delivery_id: h.deliveryId };
      return { path, body: path, bearer: id };
    },
    fail: async () => {
      const path = { endpoint_id: (await hook()).endpointId, delivery_id: MISSING };
      return { path, body: path, bearer: id };
    },
    failStatus: 404,
  },
  "POST /ai_agent/get_access_token": {
    ok: () => ({
      body: {
        user_id: USER,
        chatbot_id: a.chatbotId,
        client_api_key: a.apiKey,
        contact: { contact_name: "Grace Hopper" },
      },
    }),
    fail: () => ({ body: { user_id: USER, chatbot_id: a.chatbotId, client_api_key: "cak_wrong" } }),
    failStatus: 401,
  },
  "POST /ai_agent/refresh_token": {
    ok: () => ({ body: { user_id: USER, chatbot_id: a.chatbotId, refresh_token: refresh } }),
    fail: () => ({ body: { user_id: USER, chatbot_id: "not-a-uuid", refresh_token: refresh } }),
    failStatus: 400,
  },
  "POST /get_id_token": {
    ok: () => ({ body: { user_email_id: a.email, password: a.password } }),
    fail: () => ({ body: { user_email_id: a.email, password: "wrong password" } }),
    failStatus: 401,
  },
  "GET /get_contact_conversations": {
    ok: () => ({ query: { user_email_id: a.email, limit: 10, offset: 0, filter: "all", view: "all" }, bearer: id }),
    fail: () => ({ query: { user_email_id: a.email }, bearer: otherId }),
    failStatus: 403,
  },
  "GET /get_messages_for_conversation": {
    ok: () => ({ query: { conversation_id: conversationId, limit: 20, access_token: access } }),
    fail: () => ({ query: { conversation_id: conversationId, limit: 0, access_token: access } }),
    failStatus: 400,
  },
  "GET /ai_agent/conversations": {
    ok: () => ({ query: { access_token: access } }),
    fail: () => ({ query: { access_token: "not-a-token" } }),
    failStatus: 401,
  },
  "POST /ai_agent/send_message": {
    ok: () => ({
      query: { access_token: access },
      body: { conversation_id: conversationId, content: "Do you ship abroad?" },
    }),
    fail: () => ({ query: { access_token: access }, body: { conversation_id: MISSING, content: "hello" } }),
    failStatus: 404,
  },
  "POST /ai_agent/send_message_stream": {
    ok: () => ({
      query: { access_token: access },
      body: { conversation_id: conversationId, content: "And shipping costs?" },
    }),
    fail: () => ({ body: { content: "hello" } }),
    failStatus: 401,
  },
  "POST /mark_conversation_read": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /mark_conversation_unread": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /take_over_conversation": {
    ok: () => ({ body: { conversation_id: conversationId, operator_email: a.email }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId, operator_email: "not an e-mail" }, bearer: id }),
    failStatus: 400,
  },
  "POST /reply_to_conversation": {
    ok: () => ({ body: { conversation_id: conversationId, content: "A person here: it ships tomorrow." }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId, content: "hi", extra: 1 }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "GET /get_conversations_for_contact": {
    ok: async () => {
      const r = await fetch(`${s.url}/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}`, {
        headers: { authorization: `Bearer ${id}` },
      });
      const contact = ((await r.json()) as any).data.data.contacts[0];
      return { query: { contact_id: contact.contact_id, limit: 10, offset: 0 }, bearer: id };
    },
    fail: () => ({ query: { contact_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "GET /watch_conversation": {
    ok: () => ({ query: { conversation_id: conversationId, after_message_order: 0, access_token: access } }),
    fail: () => ({ query: { conversation_id: conversationId, after_message_order: -1, access_token: access } }),
    failStatus: 400,
  },
  "GET /watch_account": {
    ok: () => ({ query: { user_email_id: a.email }, bearer: id }),
    fail: () => ({ query: { user_email_id: a.email }, bearer: otherId }),
    failStatus: 403,
  },
  "POST /release_conversation": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /close_conversation": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId } }),
    failStatus: 401,
  },
  "POST /ai_agent/rate_conversation": {
    ok: async () => {
      // Rated once closed.
      await fetch(`${s.url}/close_conversation`, {
        method: "POST",
        headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
        body: JSON.stringify({ conversation_id: conversationId }),
      });
      return {
        query: { access_token: access },
        body: { conversation_id: conversationId, score: 5, comment: "Thanks" },
      };
    },
    fail: () => ({ query: { access_token: access }, body: { conversation_id: conversationId, score: 9 } }),
    failStatus: 400,
  },
  "GET /v1/account": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: access }),
    failStatus: 401,
  },
  "POST /v1/account/profile": {
    ok: () => ({ body: { display_name: "Sam", avatar_url: "https://cdn.example/sam.png" }, bearer: id }),
    fail: () => ({ body: { display_name: "Sam", avatar_url: "javascript:alert(1)" }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/alerts": {
    ok: () => ({ body: { sla_breach_email: false }, bearer: id }),
    fail: () => ({ body: { sla_breach_email: false }, bearer: access }),
    failStatus: 401,
  },
  "POST /v1/account/profile/picture": {
    ok: () => ({ body: { image: discPng(8).toString("base64") }, bearer: id }),
    fail: () => ({ body: { image: Buffer.from("not a picture").toString("base64") }, bearer: id }),
    failStatus: 400,
  },
  // The frame's customer asks (the console's operator is the other door).
  "POST /send_transcript": {
    ok: () => ({ query: { access_token: access }, body: { conversation_id: conversationId } }),
    fail: () => ({ query: { access_token: access }, body: { conversation_id: MISSING } }),
    failStatus: 404,
  },
  "POST /ai_agent/send_attachment": {
    ok: () => ({
      query: { access_token: access },
      body: { conversation_id: conversationId, file_name: "box.png", file: discPng(8).toString("base64") },
    }),
    fail: () => ({
      query: { access_token: access },
      body: {
        conversation_id: conversationId,
        file_name: "run.jpg",
        file: Buffer.from("\x7fELF\x02\x01\x01").toString("base64"),
      },
    }),
    failStatus: 400,
  },
  "POST /reply_with_attachment": {
    ok: () => ({
      body: {
        conversation_id: conversationId,
        file_name: "label.txt",
        file: Buffer.from("Return label").toString("base64"),
      },
      bearer: id,
    }),
    fail: () => ({ body: { conversation_id: MISSING, file_name: "x.txt", file: "eA==" }, bearer: id }),
    failStatus: 404,
  },
  "POST /send_viewing": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "POST /send_typing": {
    ok: () => ({ query: { access_token: access }, body: { conversation_id: conversationId } }),
    fail: () => ({ query: { access_token: access }, body: { conversation_id: MISSING } }),
    failStatus: 404,
  },
  "POST /v1/account/password": {
    ok: () => ({ body: { current_password: a.password, new_password: a.password }, bearer: id }),
    fail: () => ({ body: { current_password: "wrong password", new_password: "whatever it is" }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/api_keys": {
    ok: () => ({ body: { name: "openapi" }, bearer: id }),
    fail: () => ({ body: { name: "x".repeat(1000) }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/api_keys": {
    ok: () => ({ bearer: id }),
    fail: () => ({}),
    failStatus: 401,
  },
  "POST /v1/account/api_keys/rotate": {
    ok: () => ({ body: { grace_seconds: 86400 }, bearer: id }),
    fail: () => ({ body: { grace_seconds: -1 }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/api_keys/{api_key_id}/revoke": {
    ok: async () => ({
      path: { api_key_id: (await s.app.accounts.createApiKey(a.email, "to revoke")).apiKeyId },
      body: {},
      bearer: id,
    }),
    fail: () => ({ path: { api_key_id: MISSING }, body: {}, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots": {
    ok: () => ({ body: { name: "OpenAPI bot", allowed_origins: ["https://shop.example"] }, bearer: id }),
    fail: () => ({ body: { name: "No origins" }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/chatbots": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: "not-a-token" }),
    failStatus: 401,
  },
  "GET /v1/account/chatbots/{chatbot_id}": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: other.chatbotId }, bearer: id }),
    failStatus: 404,
  },
  "PATCH /v1/account/chatbots/{chatbot_id}": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { name: "Renamed bot" }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: {}, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/chatbots/{chatbot_id}/picture": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { image: discPng(8).toString("base64") }, bearer: id }),
    fail: () => ({
      path: { chatbot_id: a.chatbotId },
      body: { image: Buffer.from("<svg onload=alert(1)>").toString("base64") },
      bearer: id,
    }),
    failStatus: 400,
  },
  "POST /v1/account/chatbots/{chatbot_id}/disable": {
    ok: async () => ({
      path: {
        chatbot_id: (await s.app.accounts.createChatbot(a.email, "to disable", ["https://x.example"])).chatbotId,
      },
      body: {},
      bearer: id,
    }),
    fail: () => ({ path: { chatbot_id: other.chatbotId }, body: {}, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/members": {
    ok: () => ({ body: { email: `member${Date.now()}@openapi.example`, role: "operator" }, bearer: id }),
    fail: () => ({ body: { email: "someone@openapi.example", role: "owner" }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "GET /v1/account/members": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: access }),
    failStatus: 401,
  },
  "PATCH /v1/account/members/{member_id}": {
    ok: async () => ({ path: { member_id: await invited() }, body: { role: "admin" }, bearer: id }),
    fail: () => ({ path: { member_id: MISSING }, body: { role: "admin" }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/members/{member_id}": {
    ok: async () => ({ path: { member_id: await invited() }, bearer: id }),
    fail: () => ({ path: { member_id: a.accountId }, bearer: id }),
    failStatus: 403,
  },
  "POST /v1/account/members/{member_id}/password_reset": {
    ok: async () => ({ path: { member_id: await invited() }, body: {}, bearer: id }),
    fail: () => ({ path: { member_id: a.accountId }, body: {}, bearer: id }),
    failStatus: 403,
  },
  "POST /v1/invitations/accept": {
    ok: async () => ({ body: { invitation_code: await invitationCode(), password: "a long password" } }),
    fail: () => ({ body: { invitation_code: "inv_nothing", password: "a long password" } }),
    failStatus: 401,
  },
  "POST /v1/account/sessions/revoke": {
    ok: () => ({ body: { user_id: "nobody" }, bearer: id }),
    fail: () => ({ body: {}, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/contacts/erase": {
    ok: async () => {
      const t = await issueTokens(s.url, a, "openapi-erased");
      await send(s.url, t.access_token, "forget me");
      return { body: { user_id: "openapi-erased" }, bearer: id };
    },
    fail: () => ({ body: { contact_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "GET /v1/account/contacts/export": {
    ok: () => ({ query: { user_id: USER }, bearer: id }),
    fail: () => ({ query: { user_id: USER }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/retention": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { days: 365 }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: { days: 100000 }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/reports": {
    ok: () => ({ query: { chatbot_id: a.chatbotId, from: "2026-01-01", to: "2026-01-31" }, bearer: id }),
    fail: () => ({ query: { chatbot_id: a.chatbotId, from: "2026-02-30", to: "2026-03-01" }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/reports/operators": {
    ok: () => ({ query: { from: "2026-01-01", to: "2026-01-31", time_zone: "Europe/Paris" }, bearer: id }),
    fail: () => ({ query: { from: "2026-01-31", to: "2026-01-01" }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/audit_events": {
    ok: () => ({ query: { limit: 10 }, bearer: id }),
    fail: () => ({ query: { since: "not a time" }, bearer: id }),
    failStatus: 400,
  },
  "POST /ai_agent/launch": {
    ok: async () => {
      const r = await fetch(`${s.url}/ai_agent/get_access_token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ user_id: USER, chatbot_id: a.chatbotId, client_api_key: a.apiKey, launch_code: true }),
      });
      const code = ((await r.json()) as any).data.launch_code;
      return { body: { chatbot_id: a.chatbotId, launch_code: code, embed_origin: "https://shop.example" } };
    },
    fail: () => ({
      body: { chatbot_id: a.chatbotId, launch_code: "lc_not-a-code", embed_origin: "https://shop.example" },
    }),
    failStatus: 401,
  },
  "GET /ai_agent/contact": {
    ok: () => ({ query: { access_token: access } }),
    fail: () => ({ query: { access_token: "not-a-token" } }),
    failStatus: 401,
  },
  "POST /ai_agent/contact/email": {
    ok: () => ({ query: { access_token: access }, body: { email: "grace@example.com" } }),
    fail: () => ({ query: { access_token: access }, body: { email: "not an address" } }),
    failStatus: 400,
  },
  "GET /v1/account/mail": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: "not-a-token" }),
    failStatus: 401,
  },
  "GET /v1/account/sessions": {
    ok: () => ({ query: { user_id: USER, limit: 5, offset: 0 }, bearer: id }),
    fail: () => ({ query: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/sessions/{session_id}/revoke": {
    ok: async () => {
      // A session of its own, so the other cases' tokens keep working.
      await issueTokens(s.url, a, "openapi-revoked");
      const r = await fetch(`${s.url}/v1/account/sessions?user_id=openapi-revoked&limit=1`, {
        headers: { authorization: `Bearer ${id}` },
      });
      return { path: { session_id: ((await r.json()) as any).data.sessions[0].session_id }, bearer: id };
    },
    fail: () => ({ path: { session_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "GET /v1/account/chatbots/{chatbot_id}/session_policy": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/session_policy": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { rotate_refresh_tokens: false }, bearer: id }),
    fail: () => ({
      path: { chatbot_id: a.chatbotId },
      body: { rotate_refresh_tokens: true, reuse_grace_seconds: 301 },
      bearer: id,
    }),
    failStatus: 400,
  },
  "POST /add_conversation_note": {
    ok: () => ({ body: { conversation_id: conversationId, content: "Refund approved." }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId, content: "x" }, bearer: otherId }),
    failStatus: 404,
  },
  "PATCH /v1/account/chatbots/{chatbot_id}/knowledge_sources/{source_id}": {
    // A snippets source is never fetched: no schedule but 0 (on demand).
    ok: async () => ({ path: { chatbot_id: a.chatbotId, source_id: await knowledgeSource() }, body: {}, bearer: id }),
    fail: async () => ({
      path: { chatbot_id: a.chatbotId, source_id: await knowledgeSource() },
      body: { resync_interval_hours: 1 },
      bearer: id,
    }),
    failStatus: 400,
  },
  "GET /v1/account/chatbots/{chatbot_id}/knowledge/search": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, query: { query: "When do gift cards expire?" }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, query: { query: "gift cards" }, bearer: otherId }),
    failStatus: 404,
  },
  "GET /search_conversations": {
    ok: () => ({ query: { query: "shipping" }, bearer: id }),
    fail: () => ({ query: { query: "shipping" }, bearer: access }),
    failStatus: 401,
  },
  "GET /v1/account/labels": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: access }),
    failStatus: 401,
  },
  "POST /v1/account/labels": {
    ok: () => ({ body: { name: `new label ${++labels}` }, bearer: id }),
    fail: () => ({ body: { name: "x".repeat(41) }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "PATCH /v1/account/labels/{label_id}": {
    ok: async () => ({ path: { label_id: await label() }, body: { name: `renamed ${++labels}` }, bearer: id }),
    fail: () => ({ path: { label_id: MISSING }, body: { name: "renamed" }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/labels/{label_id}": {
    ok: async () => ({ path: { label_id: await label() }, bearer: id }),
    fail: () => ({ path: { label_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "GET /list_conversation_labels": {
    ok: () => ({ query: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ query: { conversation_id: conversationId }, bearer: access }),
    failStatus: 401,
  },
  "POST /set_conversation_priority": {
    ok: () => ({ body: { conversation_id: conversationId, priority: "high" }, bearer: id }),
    fail: () => ({ body: { conversation_id: conversationId, priority: "extreme" }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "POST /snooze_conversation": {
    ok: () => ({
      body: { conversation_id: conversationId, snoozed_until: new Date(Date.now() + 3_600_000).toISOString() },
      bearer: id,
    }),
    fail: () => ({ body: { conversation_id: conversationId, snoozed_until: "next week" }, bearer: id }),
    failStatus: 400,
  },
  "POST /set_conversation_labels": {
    ok: async () => ({ body: { conversation_id: conversationId, label_ids: [await label()] }, bearer: id }),
    fail: () => ({ body: { conversation_id: MISSING, label_ids: [] }, bearer: id }),
    failStatus: 404,
  },
  "GET /list_conversation_activity": {
    ok: () => ({ query: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ query: { conversation_id: conversationId }, bearer: access }),
    failStatus: 401,
  },
  "GET /list_conversation_notes": {
    ok: () => ({ query: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ query: { conversation_id: conversationId }, bearer: access }),
    failStatus: 401,
  },
  "POST /v1/account/availability": {
    ok: () => ({ body: { away: false }, bearer: id }),
    fail: () => ({ body: { away: "maybe" }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "GET /v1/account/availability": {
    ok: () => ({ bearer: id }),
    fail: () => ({}),
    failStatus: 401,
  },
  "GET /v1/account/teams": {
    ok: () => ({ bearer: id }),
    fail: () => ({}),
    failStatus: 401,
  },
  "POST /v1/account/teams": {
    ok: () => ({
      body: { name: `new team ${++teams}`, member_ids: [], chatbot_ids: [], assignment: "balanced", capacity: 3 },
      bearer: id,
    }),
    fail: () => ({ body: { name: "x".repeat(61) }, bearer: id, raw: true }),
    failStatus: 400,
  },
  "PATCH /v1/account/teams/{team_id}": {
    ok: async () => ({ path: { team_id: await team() }, body: { assignment: "round_robin" }, bearer: id }),
    fail: () => ({ path: { team_id: MISSING }, body: { name: "renamed" }, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/teams/{team_id}/members": {
    ok: async () => ({ path: { team_id: await team() }, body: { member_ids: [] }, bearer: id }),
    fail: () => ({ path: { team_id: MISSING }, body: { member_ids: [] }, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/teams/{team_id}/chatbots": {
    ok: async () => ({ path: { team_id: await team() }, body: { chatbot_ids: [] }, bearer: id }),
    fail: () => ({ path: { team_id: MISSING }, body: { chatbot_ids: [] }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/teams/{team_id}": {
    ok: async () => ({ path: { team_id: await team() }, bearer: id }),
    fail: () => ({ path: { team_id: MISSING }, bearer: otherId }),
    failStatus: 404,
  },
  "GET /v1/account/saved_replies": {
    ok: () => ({ bearer: id }),
    fail: () => ({}),
    failStatus: 401,
  },
  "POST /v1/account/saved_replies": {
    ok: () => ({ body: { shortcut: `thanks${++savedReplies}`, content: "Thank you!" }, bearer: id }),
    fail: () => ({ body: { shortcut: "not valid", content: "x" }, bearer: id }),
    failStatus: 400,
  },
  "PATCH /v1/account/saved_replies/{saved_reply_id}": {
    ok: async () => ({ path: { saved_reply_id: await savedReply() }, body: { content: "Changed" }, bearer: id }),
    fail: () => ({ path: { saved_reply_id: MISSING }, body: { content: "Changed" }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/saved_replies/{saved_reply_id}": {
    ok: async () => ({ path: { saved_reply_id: await savedReply() }, bearer: id }),
    fail: () => ({ path: { saved_reply_id: MISSING }, bearer: otherId }),
    failStatus: 404,
  },
  "GET /v1/account/people": {
    ok: () => ({ bearer: id }),
    fail: () => ({ bearer: access }),
    failStatus: 401,
  },
  "GET /v1/account/mentions": {
    ok: () => ({ bearer: id }),
    fail: () => ({ query: { limit: "500" }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/mentions/read": {
    ok: () => ({ body: { note_ids: [] }, bearer: id }),
    fail: () => ({ body: { note_ids: ["not-a-uuid"] }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/mentions/alerts": {
    ok: () => ({ body: { email_alerts: true }, bearer: id }),
    fail: () => ({ body: { email_alerts: true } }),
    failStatus: 401,
  },
  "POST /v1/account/chatbots/{chatbot_id}/tools": {
    ok: () => ({
      path: { chatbot_id: a.chatbotId },
      body: { name: `made_${++tools}`, description: "A tool.", url: "https://tools.example/x" },
      bearer: id,
    }),
    fail: () => ({
      path: { chatbot_id: a.chatbotId },
      body: { name: "handover", description: "A tool.", url: "https://tools.example/x" },
      bearer: id,
    }),
    failStatus: 400,
  },
  "GET /v1/account/chatbots/{chatbot_id}/tools": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "PATCH /v1/account/chatbots/{chatbot_id}/tools/{tool_id}": {
    ok: async () => ({
      path: { chatbot_id: a.chatbotId, tool_id: await agentTool() },
      body: { description: "Changed." },
      bearer: id,
    }),
    fail: () => ({ path: { chatbot_id: a.chatbotId, tool_id: MISSING }, body: { description: "x" }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/chatbots/{chatbot_id}/tools/{tool_id}": {
    ok: async () => ({ path: { chatbot_id: a.chatbotId, tool_id: await agentTool() }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId, tool_id: MISSING }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/knowledge_sources": {
    ok: () => ({
      path: { chatbot_id: a.chatbotId },
      body: snippetsSource("Returns", "Returns are free for 30 days."),
      bearer: id,
    }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: { kind: "page", url: "ftp://x" }, bearer: id }),
    failStatus: 400,
  },
  "GET /v1/account/chatbots/{chatbot_id}/knowledge_sources": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "GET /v1/account/chatbots/{chatbot_id}/knowledge_sources/{source_id}": {
    ok: async () => ({ path: { chatbot_id: a.chatbotId, source_id: await knowledgeSource() }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId, source_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
  "DELETE /v1/account/chatbots/{chatbot_id}/knowledge_sources/{source_id}": {
    ok: async () => ({ path: { chatbot_id: a.chatbotId, source_id: await knowledgeSource() }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId, source_id: MISSING }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/knowledge_sources/{source_id}/resync": {
    ok: async () => ({ path: { chatbot_id: a.chatbotId, source_id: await knowledgeSource() }, body: {}, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId, source_id: MISSING }, body: {}, bearer: id }),
    failStatus: 404,
  },
  "GET /v1/account/chatbots/{chatbot_id}/agent_settings": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "PATCH /v1/account/chatbots/{chatbot_id}/agent_settings": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { instructions: "Be brief." }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: { dont_know_limit: 99 }, bearer: id }),
    failStatus: 400,
  },
  "GET /list_tool_approvals": {
    ok: async () => ({ query: { conversation_id: await approvalConversation() }, bearer: id }),
    fail: () => ({ query: { conversation_id: conversationId }, bearer: access }),
    failStatus: 401,
  },
  "POST /decide_tool_approval": {
    ok: async () => ({
      body: { conversation_id: await approvalConversation(), call_id: await waitingCall(), decision: "refuse" },
      bearer: id,
    }),
    fail: async () => ({
      body: { conversation_id: await approvalConversation(), call_id: "call_x", decision: "maybe" },
      bearer: id,
    }),
    failStatus: 400,
  },
  "GET /v1/account/chatbots/{chatbot_id}/agent_draft": {
    ok: async () => ({ path: { chatbot_id: await drafted() }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "PATCH /v1/account/chatbots/{chatbot_id}/agent_draft": {
    ok: () => ({ path: { chatbot_id: a.chatbotId }, body: { instructions: "Be brief." }, bearer: id }),
    fail: () => ({
      path: { chatbot_id: a.chatbotId },
      body: { knowledge: { snippets: [{ title: "x", url: "ftp://x", snippet: "y" }] } },
      bearer: id,
    }),
    failStatus: 400,
  },
  "DELETE /v1/account/chatbots/{chatbot_id}/agent_draft": {
    ok: async () => ({ path: { chatbot_id: await drafted() }, bearer: id }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, bearer: otherId }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/agent_draft:publish": {
    ok: async () => ({ path: { chatbot_id: await drafted() }, body: {}, bearer: id }),
    fail: () => ({ path: { chatbot_id: MISSING }, body: {}, bearer: id }),
    failStatus: 404,
  },
  "POST /v1/account/chatbots/{chatbot_id}/agent_draft/sources": {
    ok: () => ({
      path: { chatbot_id: a.chatbotId },
      body: snippetsSource("Gifts", "Wrapped."),
      bearer: id,
    }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: { kind: "nonsense" }, bearer: id }),
    failStatus: 400,
  },
  "POST /v1/account/chatbots/{chatbot_id}/agent_draft:replay": {
    ok: async () => ({
      path: { chatbot_id: await drafted() },
      body: {
        last_conversations: 2,
        cases: [{ question: "How long does shipping take?", expected_facts: ["two days"] }],
      },
      bearer: id,
    }),
    fail: () => ({ path: { chatbot_id: a.chatbotId }, body: { last_conversations: 99 }, bearer: id }),
    failStatus: 400,
  },
  "POST /reopen_conversation": {
    ok: () => ({ body: { conversation_id: conversationId }, bearer: id }),
    fail: () => ({ body: { conversation_id: MISSING }, bearer: id }),
    failStatus: 404,
  },
};

const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops as Record<string, any>).map(([verb, op]) => ({
    key: `${verb.toUpperCase()} ${path}`,
    verb,
    path,
    op,
  })),
);

/** The route's path with its `{name}` segments filled in. */
function fill(path: string, values: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? MISSING));
}

async function call(verb: string, template: string, sent: Sent): Promise<Response> {
  const path = fill(template, sent.path);
  const qs = new URLSearchParams(Object.entries(sent.query ?? {}).map(([k, v]) => [k, String(v)])).toString();
  const headers: Record<string, string> = { ...sent.headers };
  if (sent.bearer) headers.authorization = `Bearer ${sent.bearer}`;
  if (sent.body !== undefined) headers["content-type"] = "application/json";
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(sent.path?.[name] ?? ""));
  return fetch(`${s.url}${filled}${qs ? `?${qs}` : ""}`, {
    method: verb.toUpperCase(),
    headers,
    ...(sent.body !== undefined ? { body: JSON.stringify(sent.body) } : {}),
  });
}

/** The first `n` lines of a streamed body; the rest is not waited for. */
async function firstLines(r: Response, n: number): Promise<string> {
  const reader = r.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (text.split("\n").length <= n) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text.split("\n").slice(0, n).join("\n");
}

function expectConforms(schema: any, value: unknown, what: string): void {
  expect(schemaErrors(doc, schema, value), `${what}: ${JSON.stringify(value)}`).toEqual([]);
}

/** The request follows the document: parameters it names, within their bounds, and a body of the request schema. */
function expectDocumentedRequest(op: any, sent: Sent, key: string): void {
  const params = new Map((op.parameters ?? []).map((p: any) => [p.name, p]));
  const tokenInQuery = op.security.some((sc: any) => "accessToken" in sc);
  for (const [name, value] of Object.entries(sent.query ?? {})) {
    if (name === "access_token" && tokenInQuery) continue;
    const p: any = params.get(name);
    expect(p, `${key}: query parameter ${name} is documented`).toBeDefined();
    // A repeated parameter given once is a list of one.
    expectConforms(p.schema, p.schema.type === "array" ? [value] : value, `${key} ?${name}`);
  }
  for (const p of params.values() as Iterable<any>) {
    const given = p.in === "path" ? sent.path?.[p.name] : sent.query?.[p.name];
    if (p.required) expect(given, `${key}: required ${p.in} parameter ${p.name}`).toBeDefined();
    if (p.in === "path" && given !== undefined) expectConforms(p.schema, given, `${key} {${p.name}}`);
  }
  if (op.requestBody && !sent.raw)
    expectConforms(op.requestBody.content["application/json"].schema, sent.body, `${key} request body`);
}

describe("every documented JSON route answers what the document says", () => {
  it("has a case for every documented operation", () => {
    expect(operations.map((o) => o.key).sort()).toEqual(Object.keys(cases).sort());
  });

  for (const { key, verb, path, op } of operations) {
    it(`${key}: success and failure bodies match the schemas`, async () => {
      const c = cases[key]!;
      const okSent = await c.ok();
      expectDocumentedRequest(op, okSent, key);
      const ok = await call(verb, path, okSent);
      // A watch stream never ends by itself: its first lines (the state, then the stored messages) are read.
      const text =
        path === "/watch_conversation"
          ? await firstLines(ok, 3)
          : path === "/watch_account"
            ? await firstLines(ok, 1)
            : await ok.text();
      if (op.responses["204"]) {
        // Declared no_content: the answer is its status and headers alone.
        expect(ok.status, `${key}: ${text}`).toBe(204);
        expect(text).toBe("");
      } else {
        expect(ok.status, `${key}: ${text}`).toBe(200);
        const [type, media] = Object.entries(op.responses["200"].content)[0] as [string, any];
        expect(ok.headers.get("content-type")).toBe(type);
        if (type === "application/x-ndjson") {
          const lines = text.split("\n").filter((l) => l !== "");
          expect(lines.length).toBeGreaterThanOrEqual(path === "/watch_account" ? 1 : 3);
          for (const line of lines) expectConforms(media.schema, JSON.parse(line), `${key} line`);
          // One event per line, beside it the resume cursor (added to the contract, the event keys unchanged).
          if (path === "/watch_account")
            expect(Object.keys(JSON.parse(lines[0]!).result)).toEqual(["subscribed_at", "cursor"]);
          else if (path === "/watch_conversation") {
            expect(Object.keys(JSON.parse(lines[0]!).result)).toEqual(["conversation", "cursor"]);
            expect(Object.keys(JSON.parse(lines[1]!).result)).toEqual(["message", "cursor"]);
          } else expect(Object.keys(JSON.parse(lines.at(-1)!).result)).toEqual(["reply"]);
        } else {
          expectConforms(media.schema, JSON.parse(text), `${key} 200`);
        }
      }

      const bad = await call(verb, path, await c.fail());
      expect(bad.status).toBe(c.failStatus);
      const ref = op.responses[String(c.failStatus)];
      expect(ref, `${key}: ${c.failStatus} is documented`).toBeDefined();
      const documented = resolve(doc, ref.$ref);
      expect(bad.headers.get("content-type")).toBe("application/json");
      const body = await bad.json();
      expectConforms(documented.content["application/json"].schema, body, `${key} ${c.failStatus}`);
      for (const h of Object.keys(documented.headers ?? {}))
        expect(bad.headers.get(h), `${key}: header ${h}`).not.toBeNull();
    });
  }

  it("refuses every route that names a security scheme when no credential is sent", async () => {
    for (const { key, verb, path, op } of operations) {
      // A route without a case fails "has a case for every documented operation", not every test after it.
      if (op.security.length === 0 || !cases[key]) continue;
      const sent = await cases[key].ok();
      const { access_token: _, ...query } = sent.query ?? {};
      const r = await call(verb, path, { ...(sent.path ? { path: sent.path } : {}), query, body: sent.body });
      expect(r.status, key).toBe(401);
      expectConforms(
        resolve(doc, op.responses["401"].$ref).content["application/json"].schema,
        await r.json(),
        `${key} 401`,
      );
    }
  });

  it("enforces each documented integer bound and enum of the query parameters", async () => {
    for (const { key, verb, path, op } of operations) {
      if (verb !== "get" || !cases[key]) continue;
      const base = (await cases[key].ok()) as Sent;
      for (const p of op.parameters ?? []) {
        const probes: [unknown, number][] = [];
        if (p.schema.minimum !== undefined) probes.push([p.schema.minimum, 200], [p.schema.minimum - 1, 400]);
        if (p.schema.maximum !== undefined) probes.push([p.schema.maximum, 200], [p.schema.maximum + 1, 400]);
        if (p.schema.enum)
          probes.push(...p.schema.enum.map((v: string) => [v, 200] as [unknown, number]), ["bogus", 400]);
        for (const [value, status] of probes) {
          const r = await call(verb, path, { ...base, query: { ...base.query, [p.name]: value as string } });
          // A watch that is accepted streams on: its status is the answer, its body is not read.
          const streams = r.status === 200 && r.headers.get("content-type") === "application/x-ndjson";
          const body = streams ? await r.body?.cancel() : await r.json();
          expect(r.status, `${key} ${p.name}=${value}: ${JSON.stringify(body)}`).toBe(status);
          if (status === 400) expect(body.message).toContain(p.name);
        }
      }
    }
  });

  it("answers the HTTP layer's statuses (405, 413, 414, 431) as the document describes them, on every route", async () => {
    const conforms = async (r: Response, op: any, status: number, key: string) => {
      expect(r.status, key).toBe(status);
      const documented = resolve(doc, op.responses[String(status)]?.$ref ?? "#/missing");
      expect(documented, `${key}: ${status} is documented`).toBeDefined();
      expectConforms(documented.content["application/json"].schema, await r.json(), `${key} ${status}`);
      for (const h of Object.keys(documented.headers ?? {}))
        expect(r.headers.get(h), `${key}: header ${h}`).not.toBeNull();
    };
    for (const { key, verb, path: template, op } of operations) {
      // A path with {variables} is probed at one concrete address (the HTTP layer answers before any lookup).
      const path = template.replace(/\{[a-z_]+\}/g, MISSING);
      // A method the path does not serve (a knowledge source's path serves GET and DELETE).
      const served = Object.keys((doc.paths as Record<string, object>)[template]!);
      const wrong = verb === "get" && !served.includes("delete") ? "DELETE" : "PUT";
      await conforms(await fetch(s.url + path, { method: wrong }), op, 405, `${wrong} ${path}`);
      // Upper case: fetch normalises the case of most methods, but not PATCH's.
      await conforms(
        await fetch(`${s.url}${path}?pad=${"a".repeat(9000)}`, { method: verb.toUpperCase() }),
        op,
        414,
        key,
      );
      if (op.requestBody) {
        // Over the route's own bound: a knowledge file may be up to 8 MiB (base64), a message's file 10 MiB (base64),
        // every other body 64 KiB.
        const bound: Record<string, number> = {
          "POST /v1/account/chatbots/{chatbot_id}/knowledge_sources": 12 * 1024 * 1024,
          "POST /ai_agent/send_attachment": 14 * 1024 * 1024,
          "POST /reply_with_attachment": 14 * 1024 * 1024,
        };
        const big = JSON.stringify({ content: "x".repeat(bound[key] ?? 70_000) });
        const r = await fetch(s.url + path, {
          method: verb.toUpperCase(),
          headers: { "content-type": "application/json" },
          body: big,
        });
        await conforms(r, op, 413, key);
      } else {
        expect(op.responses["413"], `${key}: no body, no 413`).toBeUndefined();
      }
      // Over HTTP/2 the 431 carries the error JSON (HTTP/1.1's parser answers it with an empty body).
      const h2 = await http2Get(path, { "x-big": "a".repeat(20_000) });
      expect(h2.status, key).toBe(431);
      expectConforms(
        resolve(doc, op.responses["431"].$ref).content["application/json"].schema,
        JSON.parse(h2.body),
        `${key} 431`,
      );
    }
  });
});

/** A GET over cleartext HTTP/2 (prior knowledge), with its status and body. */
function http2Get(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const session = http2Connect(s.url);
  return new Promise((resolvePromise, reject) => {
    const req = session.request({ ":path": path, ...headers });
    let status = 0;
    let body = "";
    req.on("response", (h) => (status = Number(h[":status"])));
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      session.close();
      resolvePromise({ status, body });
    });
    req.on("error", (e) => {
      session.destroy();
      reject(e);
    });
    req.end();
  });
}
