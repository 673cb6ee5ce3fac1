import { constants as h2c, connect as h2connect } from "node:http2";
import { connect as netConnect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";
import { MAX_OFFSET } from "../../src/domain/validate.js";
import { httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { serverForFile } from "../helpers/file-server.js";
import { send } from "../helpers/flows.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { customerSessionForFile, dbChecksum, rawRequest } from "./support.js";

const fx = serverForFile({
  server: {
    env: {
      AIAGENT_REQUEST_TIMEOUT_MS: "1000",
      AIAGENT_IDLE_TIMEOUT_MS: "500",
      AIAGENT_H2_IDLE_TIMEOUT_MS: "1000",
      AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET: "0",
      AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS: "0",
    },
  },
});
const cs = customerSessionForFile(fx, "hygiene-user");

/** Sends a raw request and asserts a 4xx that names `field` (when given) and left the database as it was. */
async function rejected(req: Parameters<typeof rawRequest>[1], status: number | "4xx", field?: string) {
  const before = dbChecksum(sqliteDb(fx.s.app));
  const r = await rawRequest(fx.s.url, req);
  if (status === "4xx") expect(Math.floor(r.status / 100), r.body).toBe(4);
  else expect(r.status, r.body).toBe(status);
  if (field) expect(JSON.parse(r.body).message).toContain(field);
  expect(dbChecksum(sqliteDb(fx.s.app))).toBe(before);
  expect((await rawRequest(fx.s.url, { path: "/healthz" })).status).toBe(200);
  return r;
}

const json = (path: string, body: unknown, headers: Record<string, string> = {}) => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json", ...headers },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

describe("identifiers with control characters, blanks or broken Unicode", () => {
  const bad = {
    nul: "a\u0000b",
    newline: "a\nb",
    tab: "a\tb",
    del: "a\u007fb",
    c1: "a\u0085b",
    separator: "a\u2028b",
    "lone surrogate": "a\ud800b",
    "leading blank": " a",
  };
  it.each(Object.entries(bad))("user_id with %s: 400 naming the field, nothing written", async (_n, userId) => {
    await rejected(
      json("/ai_agent/get_access_token", { user_id: userId, chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey }),
      400,
      "user_id",
    );
    await rejected(
      json("/ai_agent/refresh_token", { user_id: userId, chatbot_id: fx.a.chatbotId, refresh_token: "rt_x" }),
      400,
      "user_id",
    );
  });
  it.each(Object.entries(bad))("e-mail with %s: 400", async (_n, email) => {
    await rejected(json("/get_id_token", { user_email_id: email, client_api_key: fx.a.apiKey }), 400, "user_email_id");
    // In a query a lone surrogate cannot even be written (percent-encoding is UTF-8); what arrives is a clear 4xx.
    const q = /\p{Cs}/u.test(email) ? "a%ED%A0%80b" : encodeURIComponent(email);
    await rejected(
      { path: `/get_contact_conversations?user_email_id=${q}`, headers: { authorization: `Bearer ${cs.id}` } },
      "4xx",
    );
  });
  it("search, contact profile and operator e-mail with control characters: 400", async () => {
    await rejected(
      {
        path: `/get_contact_conversations?user_email_id=${encodeURIComponent(fx.a.email)}&search=%00`,
        headers: { authorization: `Bearer ${cs.id}` },
      },
      400,
      "search",
    );
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
        contact: { contact_name: "x\u0000" },
      }),
      400,
      "contact.contact_name",
    );
    await rejected(
      json(
        "/take_over_conversation",
        { conversation_id: cs.conversationId, operator_email: "op\u0000@example.com" },
        { authorization: `Bearer ${cs.id}` },
      ),
      400,
      "operator_email",
    );
  });
  it("uuids with NUL, percent-encoded NUL or extra characters: 400", async () => {
    for (const v of [
      `${cs.conversationId}\u0000`,
      `${cs.conversationId}%00`,
      `${cs.conversationId} `,
      cs.conversationId.replace(/-/g, ""),
      "../../etc/passwd",
    ]) {
      await rejected(
        { path: `/get_messages_for_conversation?conversation_id=${encodeURIComponent(v)}&access_token=${cs.access}` },
        400,
        "conversation_id",
      );
      await rejected(
        json("/ai_agent/get_access_token", { user_id: "u", chatbot_id: v, client_api_key: fx.a.apiKey }),
        400,
        "chatbot_id",
      );
      await rejected(
        json("/close_conversation", { conversation_id: v }, { authorization: `Bearer ${cs.id}` }),
        400,
        "conversation_id",
      );
    }
  });
  it("message content keeps its lines but refuses NUL and other controls", async () => {
    await rejected(json(`/ai_agent/send_message?access_token=${cs.access}`, { content: "a\u0000b" }), 400, "content");
    await rejected(json(`/ai_agent/send_message?access_token=${cs.access}`, { content: "a\u001bb" }), 400, "content");
    expect(
      (await send(fx.s.url, cs.access, "line one\nline two\ttabbed", cs.conversationId)).user_message.content,
    ).toBe("line one\nline two\ttabbed");
  });
});

describe("over-long values", () => {
  it("ids, search, content, keys and passwords over their bounds: 400 naming the field", async () => {
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u".repeat(257),
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
      }),
      400,
      "user_id",
    );
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: "k".repeat(5000),
      }),
      400,
      "client_api_key",
    );
    await rejected(
      json("/ai_agent/refresh_token", { user_id: "u", chatbot_id: fx.a.chatbotId, refresh_token: "r".repeat(5000) }),
      400,
      "refresh_token",
    );
    await rejected(json("/get_id_token", { user_email_id: fx.a.email, password: "p".repeat(5000) }), 400, "password");
    await rejected(
      json(`/ai_agent/send_message?access_token=${cs.access}`, { content: "c".repeat(8001) }),
      400,
      "content",
    );
    await rejected(
      {
        path: `/get_contact_conversations?user_email_id=${encodeURIComponent(fx.a.email)}&search=${"s".repeat(257)}`,
        headers: { authorization: `Bearer ${cs.id}` },
      },
      400,
      "search",
    );
    await rejected({ path: `/ai_agent/conversations?access_token=${"x".repeat(5000)}` }, 401);
  });
  it("a huge number is not an integer: 400", async () => {
    for (const limit of ["1e400", "99999999999999999999", "-0.5", "0x10", " 5"]) {
      await rejected(
        {
          path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}&limit=${encodeURIComponent(limit)}`,
        },
        400,
        "limit",
      );
    }
  });
});

describe("duplicate and unknown parameters", () => {
  it("a singular parameter given twice: 400 naming it", async () => {
    await rejected(
      {
        path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&conversation_id=${cs.conversationId}&access_token=${cs.access}`,
      },
      400,
      "conversation_id",
    );
    await rejected(
      {
        path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}&access_token=${cs.access}`,
      },
      400,
      "access_token",
    );
    await rejected(
      {
        path: `/get_contact_conversations?user_email_id=${encodeURIComponent(fx.a.email)}&limit=1&limit=100`,
        headers: { authorization: `Bearer ${cs.id}` },
      },
      400,
      "limit",
    );
  });
  it("an unknown parameter, or a query parameter on a body route: 400 naming it", async () => {
    await rejected(
      { path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}&admin=1` },
      400,
      "admin",
    );
    await rejected(
      json(`/ai_agent/get_access_token?user_id=x`, {
        user_id: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
      }),
      400,
      "user_id",
    );
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
        is_admin: true,
      }),
      400,
      "is_admin",
    );
  });
});

describe("server-sent events: the resume header and the token's place", () => {
  const sse = (path: string, headers: Record<string, string> = {}) => ({
    path,
    headers: { accept: "text/event-stream", ...headers },
  });
  it("the access token in an event stream's URL: 400 naming access_token", async () => {
    await rejected(
      sse(`/watch_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}`),
      400,
      "access_token",
    );
  });
  it.each(["-1", "1e3", "99999999999", "../../1", "0x10", "1 2", "1,2"])(
    "Last-Event-ID %j: 400 naming Last-Event-ID",
    async (value) => {
      await rejected(
        sse(`/watch_conversation?conversation_id=${cs.conversationId}`, {
          authorization: `Bearer ${cs.access}`,
          "last-event-id": value,
        }),
        400,
        "Last-Event-ID",
      );
    },
  );
});

describe("bodies that are not the JSON object a route takes", () => {
  const route = "/ai_agent/get_access_token";
  it.each([
    ["form-encoded", { "content-type": "application/x-www-form-urlencoded" }, "user_id=a&chatbot_id=b"],
    ["text/plain", { "content-type": "text/plain" }, "{}"],
    ["no content type", {}, "{}"],
    ["not JSON", { "content-type": "application/json" }, "user_id=a"],
    ["truncated JSON", { "content-type": "application/json" }, '{"user_id": "a"'],
    ["an array", { "content-type": "application/json" }, "[]"],
    ["null", { "content-type": "application/json" }, "null"],
    ["a string", { "content-type": "application/json" }, '"x"'],
    ["empty", { "content-type": "application/json" }, ""],
    ["invalid UTF-8", { "content-type": "application/json" }, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ["deeply nested arrays", { "content-type": "application/json" }, "[".repeat(60_000)],
    [
      "deeply nested in a field",
      { "content-type": "application/json" },
      `{"user_id": ${"[".repeat(5000)}${"]".repeat(5000)}}`,
    ],
    [
      "deeply nested objects",
      { "content-type": "application/json" },
      `{"contact": ${'{"contact_name": '.repeat(2000)}"x"${"}".repeat(2000)}}`,
    ],
    [
      "a wrong type",
      { "content-type": "application/json" },
      '{"user_id": 5, "chatbot_id": true, "client_api_key": {}}',
    ],
  ])("%s: 400, nothing written", async (_n, headers, body) => {
    await rejected({ method: "POST", path: route, headers: headers as Record<string, string>, body }, 400);
  });
});

describe("wrong methods", () => {
  it.each([
    ["GET", "/ai_agent/get_access_token", "POST"],
    ["PUT", "/ai_agent/send_message", "POST"],
    ["DELETE", "/get_contact_conversations", "GET"],
    ["POST", "/get_messages_for_conversation", "GET"],
    ["PATCH", "/close_conversation", "POST"],
  ])("%s %s: 405 with Allow: %s", async (method, path, allow) => {
    const r = await rejected(
      {
        method,
        path,
        headers: { "content-type": "application/json" },
        body: method === "GET" || method === "DELETE" ? undefined : "{}",
      },
      405,
    );
    expect(r.headers.allow).toBe(allow);
  });
});

describe("size caps", () => {
  it("a body over 64 KiB: 413, and the connection is closed rather than drained", async () => {
    const big = JSON.stringify({ user_id: "u".repeat(70_000) });
    const r = await rejected(json("/ai_agent/get_access_token", big), 413, "body");
    expect(r.headers.connection).toBe("close");
    expect(r.headers["retry-after"]).toBeUndefined();
  });
  it("a chunked body that grows past the cap: 413", async () => {
    const r = await rawStream(
      `POST /ai_agent/get_access_token HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
      (sock) => {
        const chunk = "x".repeat(16 * 1024);
        for (let i = 0; i < 6; i++) sock.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      },
    );
    expect(r).toMatch(/^HTTP\/1\.1 413/);
  });
  it("a URL over 8 KiB: 414", async () => {
    await rejected(
      { path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&x=${"a".repeat(9000)}` },
      414,
    );
  });
  it("headers over 16 KiB: 431 on HTTP/1.1 and on HTTP/2", async () => {
    await rejected({ path: "/healthz", headers: { "x-big": "a".repeat(20_000) } }, 431);
    const session = h2connect(fx.s.url);
    try {
      const result = await new Promise<string>((resolve) => {
        const req = session.request({ ":path": "/healthz", "x-big": "a".repeat(20_000) });
        req.on("response", (h) => resolve(String(h[":status"])));
        req.on("error", (e) => resolve(`error ${(e as NodeJS.ErrnoException).code}`));
        req.on("close", () => resolve(`closed ${req.rstCode}`));
        req.end();
      });
      expect(result).toBe("431");
    } finally {
      session.destroy();
    }
    expect((await rawRequest(fx.s.url, { path: "/healthz" })).status).toBe(200);
  });
});

/** Writes a raw request on a new socket, lets `more` write more, and resolves with everything the server sent before closing. */
function rawStream(head: string, more?: (sock: Socket) => void): Promise<string> {
  const u = new URL(fx.s.url);
  return new Promise((resolve) => {
    const sock = netConnect(Number(u.port), u.hostname, () => {
      sock.write(head);
      more?.(sock);
    });
    let got = "";
    sock.on("data", (d: Buffer) => (got += d.toString("latin1")));
    sock.on("error", () => undefined);
    sock.on("close", () => resolve(got));
  });
}

describe("timeouts", () => {
  it("HTTP/1.1: a client that never finishes its headers is cut off", async () => {
    const got = await rawStream("GET /healthz HTTP/1.1\r\nhost: x\r\n");
    expect(got === "" || /^HTTP\/1\.1 408/.test(got)).toBe(true);
  });
  it("HTTP/1.1: a client that never finishes its body is cut off", async () => {
    const got = await rawStream(
      `POST /ai_agent/get_access_token HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"user_id":`,
    );
    expect(got === "" || /^HTTP\/1\.1 (408|400)/.test(got)).toBe(true);
  });
  it("HTTP/1.1: an idle keep-alive connection is closed", async () => {
    const got = await rawStream("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    expect(got).toMatch(/^HTTP\/1\.1 200/);
  });
  it("HTTP/2: a stream that never finishes its body is cancelled, and an idle connection is closed", async () => {
    const session = h2connect(fx.s.url);
    const closed = new Promise<void>((r) => session.once("close", () => r()));
    const rst = await new Promise<number>((resolve) => {
      const req = session.request({
        ":method": "POST",
        ":path": "/ai_agent/get_access_token",
        "content-type": "application/json",
      });
      req.write('{"user_id":');
      req.on("response", () => undefined);
      req.on("error", () => undefined);
      req.on("close", () => resolve(req.rstCode));
    });
    expect(rst).toBe(h2c.NGHTTP2_CANCEL);
    await closed;
  });
});

describe("field names are exactly the documented snake_case ones, on every JSON route", () => {
  const routes = httpRoutes([TokenService, ConversationService]);
  const aliased = (r: (typeof routes)[number]) => r.method.input.fields.filter((f) => f.jsonName !== f.name);

  it.each(routes.filter((r) => r.body === "*").map((r) => [`${r.verb} ${r.template}`, r] as const))(
    "%s: each camelCase protobuf name is refused, naming it and the documented name",
    async (_, r) => {
      // A route with an id in its path (PATCH /v1/account/labels/{label_id}) is called on an id nobody has.
      const path = r.template.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000");
      for (const f of aliased(r)) {
        const req = { ...json(`${path}?access_token=${cs.access}`, { [f.jsonName]: "x" }), method: r.verb };
        const res = await rejected(req, 400, f.jsonName);
        expect(JSON.parse(res.body).message).toContain(f.name);
      }
    },
  );
  it.each(routes.filter((r) => r.verb === "GET").map((r) => [r.template, r] as const))(
    "GET %s: a camelCase query parameter is refused, naming it",
    async (path, r) => {
      for (const f of aliased(r))
        await rejected(
          { path: `${path}?${f.jsonName}=x&access_token=${cs.access}`, headers: { authorization: `Bearer ${cs.id}` } },
          400,
          f.jsonName,
        );
    },
  );
  it("a camelCase alias no longer posts into a conversation, nor issues tokens, nor hides beside its snake_case twin", async () => {
    await rejected(
      json(`/ai_agent/send_message?access_token=${cs.access}`, { content: "x", conversationId: cs.conversationId }),
      400,
      "conversationId",
    );
    await rejected(
      json("/ai_agent/get_access_token", { userId: "u", chatbotId: fx.a.chatbotId, clientApiKey: fx.a.apiKey }),
      400,
      "userId",
    );
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u",
        userId: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
      }),
      400,
      "userId",
    );
    await rejected(
      json("/ai_agent/get_access_token", {
        user_id: "u",
        chatbot_id: fx.a.chatbotId,
        client_api_key: fx.a.apiKey,
        contact: { contactName: "Ada" },
      }),
      400,
      "contact.contactName",
    );
  });
  it("Connect JSON keeps the protobuf JSON mapping: both spellings are accepted there", async () => {
    for (const body of [
      { userId: "connect-user", chatbotId: fx.a.chatbotId, clientApiKey: fx.a.apiKey },
      { user_id: "connect-user", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey },
    ]) {
      const r = await rawRequest(fx.s.url, json("/aiagent.v1.TokenService/GetAccessToken", body));
      expect(r.status, r.body).toBe(200);
      cs.secrets.add(JSON.parse(r.body).data.accessToken).add(JSON.parse(r.body).data.refreshToken);
    }
  });
});

describe("query parameters must be valid percent-encoded UTF-8", () => {
  const list = (q: string) => ({
    path: `/get_contact_conversations?user_email_id=${encodeURIComponent(fx.a.email)}&${q}`,
    headers: { authorization: `Bearer ${cs.id}` },
  });
  it.each([
    ["a byte that is not UTF-8", "%FF"],
    ["an encoded lone surrogate", "%ED%A0%80"],
    ["a malformed escape", "%zz"],
    ["a truncated sequence", "%E2%82"],
    ["an overlong encoding", "%C0%AF"],
    ["a lone percent sign", "100%"],
  ])("%s: 400 naming the parameter", async (_n, raw) => {
    await rejected(list(`search=${raw}`), 400, "search");
    await rejected(
      { path: `/get_messages_for_conversation?conversation_id=${raw}&access_token=${cs.access}` },
      400,
      "conversation_id",
    );
    await rejected({ path: `/ai_agent/conversations?access_token=${raw}` }, 400, "access_token");
  });
  it("a raw non-ASCII byte in the query: 400 (HTTP/1.1's parser refuses it before any route)", async () => {
    await rejected({ ...list("search=x"), path: `${list("search=").path}\u00e9` }, 400);
  });
  it("valid encodings are decoded: an emoji, + as a space", async () => {
    for (const q of ["search=%F0%9F%98%80", "search=ada+lovelace", "search=a%2Bb"]) {
      const r = await rawRequest(fx.s.url, list(q));
      expect(r.status, `${q}: ${r.body}`).toBe(200);
    }
  });
  it("an empty value is not a value for an enum or an integer: filter=, limit=, offset= are 400 naming the parameter", async () => {
    for (const name of ["filter", "limit", "offset"]) await rejected(list(`${name}=`), 400, name);
    for (const name of ["limit", "offset"])
      await rejected(
        {
          path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}&${name}=`,
        },
        400,
        name,
      );
    // Left out, each takes its default.
    expect((await rawRequest(fx.s.url, list("search="))).status).toBe(200);
  });
  it(`offset is at most ${MAX_OFFSET.toLocaleString("en")} on both lists (and over Connect)`, async () => {
    await rejected(list(`offset=${MAX_OFFSET + 1}`), 400, "offset");
    await rejected(
      {
        path: `/get_messages_for_conversation?conversation_id=${cs.conversationId}&access_token=${cs.access}&offset=${MAX_OFFSET + 1}`,
      },
      400,
      "offset",
    );
    expect((await rawRequest(fx.s.url, list(`offset=${MAX_OFFSET}`))).status).toBe(200);
    const r = await rawRequest(
      fx.s.url,
      json(
        "/aiagent.v1.ConversationService/GetMessagesForConversation",
        { conversationId: cs.conversationId, offset: MAX_OFFSET + 1 },
        { authorization: `Bearer ${cs.id}` },
      ),
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).message).toContain("offset");
  });
});

describe("JSON bodies: UTF-8 only, each key once", () => {
  const body = () => ({ user_id: "strict-user", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey });
  it.each(["latin1", "iso-8859-1", "utf-16", "us-ascii"])("charset=%s: 400 naming content-type", async (cs) => {
    await rejected(
      json("/ai_agent/get_access_token", body(), { "content-type": `application/json; charset=${cs}` }),
      400,
      "content-type",
    );
  });
  it("charset utf-8 (any case, quoted or not) or none is accepted", async () => {
    for (const ct of ["application/json", "application/json; charset=utf-8", 'application/json;charset="UTF-8"']) {
      const r = await rawRequest(fx.s.url, json("/ai_agent/get_access_token", body(), { "content-type": ct }));
      expect(r.status, ct).toBe(200);
      cs.secrets.add(JSON.parse(r.body).data.access_token).add(JSON.parse(r.body).data.refresh_token);
    }
  });
  it("a byte that is not UTF-8 inside a string: 400", async () => {
    const raw = Buffer.concat([
      Buffer.from(`{"user_id":"a`),
      Buffer.from([0xff]),
      Buffer.from(`b","chatbot_id":"${fx.a.chatbotId}","client_api_key":"${fx.a.apiKey}"}`),
    ]);
    await rejected({ ...json("/ai_agent/get_access_token", ""), body: raw }, 400, "body");
  });
  it.each([
    [
      "a repeated top-level key",
      `{"user_id":"a","chatbot_id":"%BOT%","client_api_key":"%KEY%","user_id":"b"}`,
      "user_id",
    ],
    [
      "the same key written with an escape",
      `{"user_id":"a","user\\u005fid":"b","chatbot_id":"%BOT%","client_api_key":"%KEY%"}`,
      "user_id",
    ],
    [
      "a repeated key in a nested object",
      `{"user_id":"a","chatbot_id":"%BOT%","client_api_key":"%KEY%","contact":{"email":"a@x.example","email":"b@x.example"}}`,
      "contact.email",
    ],
    [
      "blanks before the colon",
      `{"user_id" : "a", "user_id"\n:"b","chatbot_id":"%BOT%","client_api_key":"%KEY%"}`,
      "user_id",
    ],
  ])("%s: 400 naming it, nothing written", async (_n, text, field) => {
    const t = text.replaceAll("%BOT%", fx.a.chatbotId).replaceAll("%KEY%", fx.a.apiKey);
    await rejected(json("/ai_agent/get_access_token", t), 400, field);
  });
  it("a quote and colon inside a string value is not taken for a key", async () => {
    const r = await rawRequest(
      fx.s.url,
      json(
        `/ai_agent/send_message?access_token=${cs.access}`,
        `{"content":"say \\"a\\" : \\"b\\"","conversation_id":"${cs.conversationId}"}`,
      ),
    );
    expect(r.status, r.body).toBe(200);
    expect(JSON.parse(r.body).data.user_message.content).toBe('say "a" : "b"');
  });
});

describe("the contact profile's e-mail is an e-mail address", () => {
  it.each(["not-an-email", "two@@example.com", "a b@example.com", "@example.com", "ada@"])(
    "contact.email %j: 400 naming it, on the JSON route and over Connect",
    async (email) => {
      const b = { user_id: "mail-user", chatbot_id: fx.a.chatbotId, client_api_key: fx.a.apiKey };
      await rejected(json("/ai_agent/get_access_token", { ...b, contact: { email } }), 400, "contact.email");
      const r = await rejected(
        json("/aiagent.v1.TokenService/GetAccessToken", {
          userId: b.user_id,
          chatbotId: b.chatbot_id,
          clientApiKey: b.client_api_key,
          contact: { email },
        }),
        400,
        "contact.email",
      );
      expect(JSON.parse(r.body).code).toBe("invalid_argument");
    },
  );
  it("an empty or valid contact.email is accepted", async () => {
    for (const email of ["", "ada@example.com"]) {
      const r = await rawRequest(
        fx.s.url,
        json("/ai_agent/get_access_token", {
          user_id: "mail-user",
          chatbot_id: fx.a.chatbotId,
          client_api_key: fx.a.apiKey,
          contact: { email },
        }),
      );
      expect(r.status, r.body).toBe(200);
      cs.secrets.add(JSON.parse(r.body).data.access_token).add(JSON.parse(r.body).data.refresh_token);
    }
  });
});
