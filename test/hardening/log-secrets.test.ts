import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, expect, it } from "vitest";
import { GetMessagesForConversationRequestSchema } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { expectNoSecrets } from "./support.js";

// Every credential through every door it can be pushed through, right and wrong, at debug level; then the log is
// searched for each secret and for anything shaped like one. (Each other file in this folder checks its own logs too.)
let s: TestServer;
let a: TestAccount;
const secrets = new Set<string>();

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_LOG_LEVEL: "debug", AIAGENT_BUSY_TIMEOUT_MS: "100" } });
  a = await s.account();
  secrets.add(a.apiKey).add(a.password);
});

afterAll(() => s.close(true));

it("no API key, refresh token, password or access token reaches the log, whichever way it was sent", async () => {
  const t = await issueTokens(s.url, a, "log-user");
  const id = await idToken(s.url, a);
  secrets.add(t.access_token).add(t.refresh_token).add(id);
  const conv = (await send(s.url, t.access_token, "hello")).conversation_id;

  // Each door must be reached (its answer checked): a request refused before the logging code proves nothing.
  const expectStatus = async (r: Promise<{ status: number; body: any }>, status: number, what: string) => {
    const got = await r;
    expect(got.status, what).toBe(status);
    return got.body;
  };
  // Right, on the documented routes.
  const refreshed = await expectStatus(
    postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "log-user",
      chatbot_id: a.chatbotId,
      refresh_token: t.refresh_token,
      client_api_key: a.apiKey,
    }),
    200,
    "refresh_token",
  );
  secrets.add(refreshed.data.access_token);
  const byPassword = await expectStatus(
    postJson(s.url, "/get_id_token", { user_email_id: a.email, password: a.password }),
    200,
    "get_id_token with the password",
  );
  secrets.add(byPassword.data.idToken);
  await expectStatus(
    getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv, access_token: t.access_token }),
    200,
    "messages with the access token",
  );
  await expectStatus(
    getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv }, { authorization: `Bearer ${id}` }),
    200,
    "messages with the ID token",
  );
  // Wrong, or in the wrong place: in query strings, in headers, misspelt, doubled.
  await expectStatus(
    postJson(
      s.url,
      `/ai_agent/get_access_token?client_api_key=${a.apiKey}&refresh_token=${t.refresh_token}&password=${encodeURIComponent(a.password)}`,
      {},
    ),
    400,
    "credentials in the query",
  );
  await expectStatus(
    postJson(s.url, "/ai_agent/get_access_token", {
      user_id: "x",
      chatbot_id: a.chatbotId,
      client_api_key: `${a.apiKey}x`,
    }),
    401,
    "a wrong API key",
  );
  await expectStatus(
    postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "x",
      chatbot_id: a.chatbotId,
      refresh_token: `${t.refresh_token}x`,
    }),
    401,
    "a wrong refresh token",
  );
  await expectStatus(
    postJson(s.url, "/get_id_token", { user_email_id: a.email, password: `${a.password}!` }),
    401,
    "a wrong password",
  );
  await expectStatus(
    getJson(s.url, "/ai_agent/conversations", { access_token: `${t.access_token}x` }),
    401,
    "a damaged access token",
  );
  await expectStatus(
    getJson(s.url, `/ai_agent/conversations?access_token=${t.access_token}&access_token=${t.access_token}`),
    400,
    "a doubled access token",
  );
  await expectStatus(
    getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email, api_key: a.apiKey },
      { authorization: `Bearer ${t.access_token}`, "x-api-key": a.apiKey },
    ),
    400,
    "an API key in the query, an access token as an ID token",
  );
  await expectStatus(
    postJson(s.url, "/ai_agent/get_access_token", `{"client_api_key": "${a.apiKey}", "oops"`),
    400,
    "malformed JSON around an API key",
  );
  expect((await fetch(`${s.url}/nowhere/${a.apiKey}?token=${t.refresh_token}`)).status).toBe(404);
  // Over RPC, including a Connect GET whose whole request (token included) is base64 in the URL.
  for (const protocol of ["connect-json", "connect-binary", "grpc", "grpc-web"] as const) {
    const { tokens, conversations } = rpcClients(s.url, protocol);
    const r = await tokens.refreshToken({ userId: "log-user", chatbotId: a.chatbotId, refreshToken: t.refresh_token });
    expect(r.data?.accessToken.split("."), protocol).toHaveLength(3);
    secrets.add(r.data!.accessToken);
    const i = await tokens.getIdToken({ userEmailId: a.email, credential: { case: "password", value: a.password } });
    expect(i.data?.idToken.split("."), protocol).toHaveLength(3);
    secrets.add(i.data!.idToken);
    const m = await conversations.getMessagesForConversation({ conversationId: conv, accessToken: t.access_token });
    expect(m.messages.length, protocol).toBeGreaterThan(0);
    const c = await conversations.getContactConversations(
      { userEmailId: a.email },
      { headers: { authorization: `Bearer ${id}` } },
    );
    expect(c.data?.data?.contacts.length, protocol).toBeGreaterThan(0);
  }
  // Every RPC door was logged, so the log that is searched below did see those requests.
  for (const path of [
    "/aiagent.v1.TokenService/RefreshToken",
    "/aiagent.v1.TokenService/GetIdToken",
    "/aiagent.v1.ConversationService/GetMessagesForConversation",
    "/aiagent.v1.ConversationService/GetContactConversations",
  ])
    expect(s.logs.filter((l) => l.includes('"msg":"request"') && l.includes(path)).length, path).toBeGreaterThanOrEqual(
      4,
    );
  const message = Buffer.from(
    toBinary(
      GetMessagesForConversationRequestSchema,
      create(GetMessagesForConversationRequestSchema, { conversationId: conv, accessToken: t.access_token }),
    ),
  ).toString("base64url");
  const viaGet = await fetch(
    `${s.url}/aiagent.v1.ConversationService/GetMessagesForConversation?connect=v1&encoding=proto&base64=1&message=${message}`,
  );
  expect(viaGet.status).toBe(200);

  expect(s.logs.some((l) => l.includes('"msg":"request"'))).toBe(true);
  expectNoSecrets(s.logs, secrets);
  expect(s.logs.join("\n")).not.toContain(message.slice(0, 40));
  expect(s.logs.join("\n")).not.toContain(encodeURIComponent(a.password));
});
