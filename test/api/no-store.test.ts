import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";
import { httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { serverForFile } from "../helpers/file-server.js";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { type RpcProtocol, rpcClients } from "../helpers/rpc.js";

// Every response that carries an account's or a customer's data (or a credential) says Cache-Control: no-store, so
// no browser, proxy or CDN keeps it: success or error, on the JSON routes, Connect (POST and GET) and gRPC.

const fx = serverForFile();
let access: string;
let refresh: string;
let id: string;
let conversationId: string;
let contactId: string;
let launchCode: string;
/** Two labels of the account: one renamed and put on, one deleted. */
let labelId: string;
let doomedLabelId: string;
const USER = "cache-user";

beforeAll(async () => {
  const t = await issueTokens(fx.s.url, fx.a, USER, { contact_name: "Ada" });
  access = t.access_token;
  refresh = t.refresh_token;
  id = await idToken(fx.s.url, fx.a);
  launchCode = (
    await postJson(fx.s.url, "/ai_agent/get_access_token", {
      user_id: USER,
      chatbot_id: fx.a.chatbotId,
      client_api_key: fx.a.apiKey,
      launch_code: true,
    })
  ).body.data.launch_code;
  conversationId = (await send(fx.s.url, access, "hello")).conversation_id;
  contactId = (await contacts(fx.s.url, id, fx.a.email)).body.data.data.contacts[0].contact_id;
  const label = async (name: string) =>
    (await postJson(fx.s.url, "/v1/account/labels", { name }, bearer(id))).body.data.label_id as string;
  labelId = await label("Refunds");
  doomedLabelId = await label("Old");
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/** One successful and one failing request per documented JSON route. */
const routes: Record<string, { ok: () => RequestInit & { path: string }; fail: () => RequestInit & { path: string } }> =
  {
    "POST /ai_agent/get_access_token": {
      ok: () =>
        post("/ai_agent/get_access_token", { user_id: USER, chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey }),
      fail: () =>
        post("/ai_agent/get_access_token", { user_id: USER, chatbot_id: fx.a.chatbotId, client_api_key: "x" }),
    },
    "POST /ai_agent/refresh_token": {
      ok: () => post("/ai_agent/refresh_token", { user_id: USER, chatbot_id: fx.a.chatbotId, refresh_token: refresh }),
      fail: () => post("/ai_agent/refresh_token", { user_id: USER, chatbot_id: fx.a.chatbotId, refresh_token: "rt_x" }),
    },
    "POST /ai_agent/launch": {
      ok: () =>
        post("/ai_agent/launch", {
          chatbot_id: fx.a.chatbotId,
          launch_code: launchCode,
          embed_origin: "https://shop.example",
        }),
      fail: () =>
        post("/ai_agent/launch", {
          chatbot_id: fx.a.chatbotId,
          launch_code: "lc_x",
          embed_origin: "https://shop.example",
        }),
    },
    "POST /get_id_token": {
      ok: () => post("/get_id_token", { user_email_id: fx.a.email, client_api_key: fx.a.apiKey }),
      fail: () => post("/get_id_token", { user_email_id: fx.a.email, client_api_key: "cak_wrong" }),
    },
    "GET /get_contact_conversations": {
      ok: () => ({ path: `/get_contact_conversations?user_email_id=${fx.a.email}`, headers: bearer(id) }),
      fail: () => ({ path: `/get_contact_conversations?user_email_id=${fx.a.email}`, headers: bearer("x") }),
    },
    "GET /get_messages_for_conversation": {
      ok: () => ({ path: `/get_messages_for_conversation?conversation_id=${conversationId}&access_token=${access}` }),
      fail: () => ({
        path: `/get_messages_for_conversation?conversation_id=${crypto.randomUUID()}`,
        headers: bearer(id),
      }),
    },
    "GET /ai_agent/conversations": {
      ok: () => ({ path: `/ai_agent/conversations?access_token=${access}` }),
      fail: () => ({ path: "/ai_agent/conversations?access_token=x" }),
    },
    "POST /ai_agent/send_message": {
      ok: () =>
        post(`/ai_agent/send_message?access_token=${access}`, { content: "hi", conversation_id: conversationId }),
      fail: () => post(`/ai_agent/send_message?access_token=${access}`, { content: "" }),
    },
    "POST /ai_agent/send_message_stream": {
      ok: () =>
        post(`/ai_agent/send_message_stream?access_token=${access}`, {
          content: "hi",
          conversation_id: conversationId,
        }),
      fail: () => post("/ai_agent/send_message_stream?access_token=x", { content: "hi" }),
    },
    "POST /mark_conversation_read": {
      ok: () => post("/mark_conversation_read", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/mark_conversation_read", { conversation_id: crypto.randomUUID() }, bearer(id)),
    },
    "POST /mark_conversation_unread": {
      ok: () => post("/mark_conversation_unread", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/mark_conversation_unread", { conversation_id: crypto.randomUUID() }, bearer(id)),
    },
    "POST /take_over_conversation": {
      ok: () => post("/take_over_conversation", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/take_over_conversation", { conversation_id: "x" }, bearer(id)),
    },
    "POST /reply_to_conversation": {
      ok: () => post("/reply_to_conversation", { conversation_id: conversationId, content: "Sam here" }, bearer(id)),
      fail: () => post("/reply_to_conversation", { conversation_id: conversationId, content: "" }, bearer(id)),
    },
    "POST /release_conversation": {
      ok: () => post("/release_conversation", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/release_conversation", { conversation_id: "x" }, bearer(id)),
    },
    "GET /get_conversations_for_contact": {
      ok: () => ({ path: `/get_conversations_for_contact?contact_id=${contactId}`, headers: bearer(id) }),
      fail: () => ({ path: `/get_conversations_for_contact?contact_id=${crypto.randomUUID()}`, headers: bearer(id) }),
    },
    "GET /watch_conversation": {
      ok: () => ({ path: `/watch_conversation?conversation_id=${conversationId}&access_token=${access}` }),
      fail: () => ({ path: `/watch_conversation?conversation_id=${conversationId}&access_token=x` }),
    },
    "GET /watch_account": {
      ok: () => ({ path: `/watch_account?user_email_id=${fx.a.email}`, headers: bearer(id) }),
      fail: () => ({ path: `/watch_account?user_email_id=${fx.a.email}`, headers: bearer("x") }),
    },
    "POST /close_conversation": {
      ok: () => post("/close_conversation", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/close_conversation", { conversation_id: conversationId }),
    },
    // Rated now that the case above closed it.
    "POST /ai_agent/rate_conversation": {
      ok: () =>
        post(`/ai_agent/rate_conversation?access_token=${access}`, { conversation_id: conversationId, score: 4 }),
      fail: () =>
        post(`/ai_agent/rate_conversation?access_token=${access}`, { conversation_id: conversationId, score: 9 }),
    },
    "POST /ai_agent/send_attachment": {
      ok: () =>
        post(`/ai_agent/send_attachment?access_token=${access}`, {
          conversation_id: conversationId,
          file_name: "order.txt",
          file: Buffer.from("Order 1234").toString("base64"),
        }),
      fail: () =>
        post(`/ai_agent/send_attachment?access_token=${access}`, { conversation_id: conversationId, file: "" }),
    },
    "POST /reply_with_attachment": {
      ok: () =>
        post(
          "/reply_with_attachment",
          { conversation_id: conversationId, file_name: "label.txt", file: Buffer.from("Label").toString("base64") },
          bearer(id),
        ),
      fail: () => post("/reply_with_attachment", { conversation_id: conversationId, file: "" }, bearer(id)),
    },
    "POST /send_viewing": {
      ok: () => post("/send_viewing", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/send_viewing", { conversation_id: crypto.randomUUID() }, bearer(id)),
    },
    "POST /send_typing": {
      ok: () => post(`/send_typing?access_token=${access}`, { conversation_id: conversationId }),
      fail: () => post(`/send_typing?access_token=${access}`, { conversation_id: crypto.randomUUID() }),
    },
    "POST /add_conversation_note": {
      ok: () =>
        post("/add_conversation_note", { conversation_id: conversationId, content: "For the team" }, bearer(id)),
      fail: () => post("/add_conversation_note", { conversation_id: conversationId, content: "" }, bearer(id)),
    },
    "GET /list_conversation_activity": {
      ok: () => ({ path: `/list_conversation_activity?conversation_id=${conversationId}`, headers: bearer(id) }),
      fail: () => ({ path: `/list_conversation_activity?conversation_id=${crypto.randomUUID()}`, headers: bearer(id) }),
    },
    "GET /list_conversation_notes": {
      ok: () => ({ path: `/list_conversation_notes?conversation_id=${conversationId}`, headers: bearer(id) }),
      fail: () => ({ path: `/list_conversation_notes?conversation_id=${crypto.randomUUID()}`, headers: bearer(id) }),
    },
    "GET /search_conversations": {
      ok: () => ({ path: "/search_conversations?query=hello", headers: bearer(id) }),
      fail: () => ({ path: "/search_conversations?query=", headers: bearer(id) }),
    },
    "GET /v1/account/labels": {
      ok: () => ({ path: "/v1/account/labels", headers: bearer(id) }),
      fail: () => ({ path: "/v1/account/labels", headers: bearer("x") }),
    },
    "POST /v1/account/labels": {
      ok: () => post("/v1/account/labels", { name: "Billing" }, bearer(id)),
      fail: () => post("/v1/account/labels", { name: "" }, bearer(id)),
    },
    "PATCH /v1/account/labels/{label_id}": {
      ok: () => ({ ...post(`/v1/account/labels/${labelId}`, { name: "Refunds 2" }, bearer(id)), method: "PATCH" }),
      fail: () => ({ ...post(`/v1/account/labels/${labelId}`, { name: "" }, bearer(id)), method: "PATCH" }),
    },
    "DELETE /v1/account/labels/{label_id}": {
      ok: () => ({ path: `/v1/account/labels/${doomedLabelId}`, method: "DELETE", headers: bearer(id) }),
      fail: () => ({ path: `/v1/account/labels/${crypto.randomUUID()}`, method: "DELETE", headers: bearer(id) }),
    },
    "GET /list_conversation_labels": {
      ok: () => ({ path: `/list_conversation_labels?conversation_id=${conversationId}`, headers: bearer(id) }),
      fail: () => ({ path: `/list_conversation_labels?conversation_id=${crypto.randomUUID()}`, headers: bearer(id) }),
    },
    "POST /set_conversation_priority": {
      ok: () => post("/set_conversation_priority", { conversation_id: conversationId, priority: "high" }, bearer(id)),
      fail: () => post("/set_conversation_priority", { conversation_id: conversationId, priority: "x" }, bearer(id)),
    },
    "POST /snooze_conversation": {
      ok: () =>
        post(
          "/snooze_conversation",
          { conversation_id: conversationId, snoozed_until: new Date(Date.now() + 3_600_000).toISOString() },
          bearer(id),
        ),
      fail: () => post("/snooze_conversation", { conversation_id: conversationId, snoozed_until: "soon" }, bearer(id)),
    },
    "POST /set_conversation_labels": {
      ok: () => post("/set_conversation_labels", { conversation_id: conversationId, label_ids: [labelId] }, bearer(id)),
      fail: () => post("/set_conversation_labels", { conversation_id: "x", label_ids: [] }, bearer(id)),
    },
    "POST /reopen_conversation": {
      ok: () => post("/reopen_conversation", { conversation_id: conversationId }, bearer(id)),
      fail: () => post("/reopen_conversation", { conversation_id: conversationId, extra: 1 }, bearer(id)),
    },
  };

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return {
    path,
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

async function call(req: RequestInit & { path: string }) {
  const r = await fetch(fx.s.url + req.path, req);
  // A watch stream never ends by itself: its headers are what is checked here.
  if (req.path.startsWith("/watch_")) {
    await r.body?.cancel();
    return Object.assign(r, { bytes: undefined });
  }
  return Object.assign(r, { bytes: (await r.arrayBuffer()).byteLength });
}

describe("the JSON routes", () => {
  it("cover every route the contract declares", () => {
    const declared = httpRoutes([TokenService, ConversationService]).map((r) => `${r.verb} ${r.template}`);
    expect(Object.keys(routes).sort()).toEqual(declared.sort());
  });
  it("the watch routes as server-sent events (Accept: text/event-stream): no-store on success and on error", async () => {
    const sse = { accept: "text/event-stream" };
    for (const req of [
      { path: `/watch_conversation?conversation_id=${conversationId}`, headers: { ...sse, ...bearer(access) } },
      { path: `/watch_account?user_email_id=${fx.a.email}`, headers: { ...sse, ...bearer(id) } },
    ]) {
      const ok = await call(req);
      expect([ok.status, ok.headers.get("content-type")], req.path).toEqual([200, "text/event-stream"]);
      expect(ok.headers.get("cache-control"), req.path).toBe("no-store");
      const fail = await call({ ...req, headers: { ...sse, ...bearer("x") } });
      expect(fail.status, req.path).toBe(401);
      expect(fail.headers.get("cache-control"), req.path).toBe("no-store");
    }
  });
  it.each(Object.keys(routes))("%s: no-store on success and on error", async (name) => {
    const ok = await call(routes[name]!.ok());
    expect(ok.status, name).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    // A whole answer says how long it is (a client can tell a cut-off answer from a complete one); a stream cannot.
    if (ok.headers.get("content-type") === "application/json")
      expect(ok.headers.get("content-length"), name).toBe(String(ok.bytes));
    const fail = await call(routes[name]!.fail());
    expect(fail.status, name).toBeGreaterThanOrEqual(400);
    expect(fail.headers.get("cache-control")).toBe("no-store");
  });
  it("a wrong verb's 405 too", async () => {
    const r = await call({ path: "/get_contact_conversations", method: "DELETE" });
    expect(r.status).toBe(405);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });
});

describe("Connect GET forms of the private reads", () => {
  const get = (method: string, message: unknown, headers: Record<string, string> = {}) =>
    fetch(
      `${fx.s.url}/aiagent.v1.ConversationService/${method}?connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify(message))}`,
      { headers },
    );
  it.each([
    ["GetContactConversations", () => ({ userEmailId: fx.a.email }), () => bearer(id)],
    ["GetMessagesForConversation", () => ({ conversationId, accessToken: access }), () => ({})],
    ["ListFrameConversations", () => ({ accessToken: access }), () => ({})],
  ] as const)("%s: no-store on success and on error", async (method, message, headers) => {
    const ok = await get(method, message(), headers());
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    const fail = await get(method, { ...message(), accessToken: "x" }, { authorization: "Bearer x" });
    expect(fail.status).toBe(401);
    expect(fail.headers.get("cache-control")).toBe("no-store");
  });
});

describe.each(["connect-json", "connect-binary", "grpc", "grpc-web"] as RpcProtocol[])("%s", (protocol) => {
  it("private reads and token calls answer no-store in their response headers, on success and on error", async () => {
    const { tokens, conversations } = rpcClients(fx.s.url, protocol);
    const seen: (string | null)[] = [];
    const onHeader = (h: Headers) => void seen.push(h.get("cache-control"));
    await conversations.getContactConversations({ userEmailId: fx.a.email }, { headers: bearer(id), onHeader });
    await conversations.getMessagesForConversation({ conversationId, accessToken: access }, { onHeader });
    await conversations.listFrameConversations({ accessToken: access }, { onHeader });
    await tokens.getAccessToken({ userId: USER, chatbotId: fx.a.chatbotId, clientApiKey: fx.a.apiKey }, { onHeader });
    expect(seen).toEqual(["no-store", "no-store", "no-store", "no-store"]);
    for (const failing of [
      () => conversations.getContactConversations({ userEmailId: fx.a.email }, { headers: bearer("x") }),
      () => conversations.getMessagesForConversation({ conversationId: crypto.randomUUID() }, { headers: bearer(id) }),
    ]) {
      const err = await failing().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err).toBeDefined();
      expect(err!.metadata.get("cache-control")).toBe("no-store");
    }
  });
});
