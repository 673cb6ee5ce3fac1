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

  // Right, on the documented routes.
  await postJson(s.url, "/ai_agent/refresh_token", {
    user_id: "log-user",
    chatbot_id: a.chatbotId,
    refresh_token: t.refresh_token,
    client_api_key: a.apiKey,
  });
  await postJson(s.url, "/get_id_token", { user_email_id: a.email, password: a.password });
  await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv, access_token: t.access_token });
  await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv }, { authorization: `Bearer ${id}` });
  // Wrong, or in the wrong place: in query strings, in headers, misspelt, doubled.
  await postJson(
    s.url,
    `/ai_agent/get_access_token?client_api_key=${a.apiKey}&refresh_token=${t.refresh_token}&password=${encodeURIComponent(a.password)}`,
    {},
  );
  await postJson(s.url, "/ai_agent/get_access_token", {
    user_id: "x",
    chatbot_id: a.chatbotId,
    client_api_key: `${a.apiKey}x`,
  });
  await postJson(s.url, "/ai_agent/refresh_token", {
    user_id: "x",
    chatbot_id: a.chatbotId,
    refresh_token: `${t.refresh_token}x`,
  });
  await postJson(s.url, "/get_id_token", { user_email_id: a.email, password: `${a.password}!` });
  await getJson(s.url, "/ai_agent/conversations", { access_token: `${t.access_token}x` });
  await getJson(s.url, `/ai_agent/conversations?access_token=${t.access_token}&access_token=${t.access_token}`);
  await getJson(
    s.url,
    "/get_contact_conversations",
    { user_email_id: a.email, api_key: a.apiKey },
    { authorization: `Bearer ${t.access_token}`, "x-api-key": a.apiKey },
  );
  await postJson(s.url, "/ai_agent/get_access_token", `{"client_api_key": "${a.apiKey}", "oops"`);
  await fetch(`${s.url}/nowhere/${a.apiKey}?token=${t.refresh_token}`);
  // Over RPC, including a Connect GET whose whole request (token included) is base64 in the URL.
  for (const protocol of ["connect-json", "connect-binary", "grpc", "grpc-web"] as const) {
    const { tokens, conversations } = rpcClients(s.url, protocol);
    await tokens
      .refreshToken({ userId: "log-user", chatbotId: a.chatbotId, refreshToken: t.refresh_token })
      .catch(() => undefined);
    await tokens
      .getIdToken({ userEmailId: a.email, credential: { case: "password", value: a.password } })
      .catch(() => undefined);
    await conversations
      .getMessagesForConversation({ conversationId: conv, accessToken: t.access_token })
      .catch(() => undefined);
    await conversations
      .getContactConversations({ userEmailId: a.email }, { headers: { authorization: `Bearer ${id}` } })
      .catch(() => undefined);
  }
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
