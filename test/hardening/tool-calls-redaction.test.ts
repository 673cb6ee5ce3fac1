import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, oneCallThen, startLlmStandIn } from "../frame/llm-stand-in.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, requestJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { closeAgentTest, ToolServer } from "../helpers/tool-server.js";

// A customer's own reads (the frame's access token) carry a message's tool_calls reduced to each call's id, name and
// status: never the arguments the model gave or the tool's answer. Every read a customer has is tried, over JSON and
// Connect; the account's reads keep the whole record; another customer or account reads nothing of it.

const SECRET_ARGUMENT = "order-SECRET-4471";
const SECRET_RESULT = "iban DE00 RESULT-SECRET";
let llm: LlmStandIn;
let tools: ToolServer;
let s: TestServer;
let a: TestAccount;
let auth: Record<string, string>;
let at: string;
let conversationId: string;

const expectRedacted = (toolCalls: string) => {
  expect(JSON.parse(toolCalls)).toEqual([{ id: "c1", name: "look_up", status: "succeeded" }]);
  expect(toolCalls).not.toContain("SECRET");
};

beforeAll(async () => {
  llm = await startLlmStandIn();
  tools = new ToolServer();
  await tools.start();
  s = await startServer({
    env: { AIAGENT_LLM_BASE_URL: llm.url, AIAGENT_LLM_MODEL: "m" },
    overrides: { dispatch: false },
  });
  a = await s.account();
  auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
  const made = await requestJson(s.url, "POST", `/v1/account/chatbots/${a.chatbotId}/tools`, auth, {
    name: "look_up",
    description: "Looks an order up.",
    parameters: '{"type":"object","properties":{"order":{"type":"string"}}}',
    url: tools.url("/look"),
  });
  tools.secret = made.body.data.secret;
  tools.behave = (_c, res) => res.writeHead(200).end(SECRET_RESULT);
  at = (await issueTokens(s.url, a, "redacted-customer")).access_token;
  llm.behave(oneCallThen({ id: "c1", name: "look_up", arguments: `{"order":"${SECRET_ARGUMENT}"}` }, "Found it."));
  const r = await send(s.url, at, "Where is my order?");
  conversationId = r.conversation_id;
  // The send's own answer.
  expectRedacted(r.reply.tool_calls);
});

afterAll(() => closeAgentTest(s, tools, llm));

describe("a customer's reads of tool_calls", () => {
  it("the streamed send's reply is redacted", async () => {
    llm.behave(oneCallThen({ id: "c1", name: "look_up", arguments: `{"order":"${SECRET_ARGUMENT}"}` }, "Again."));
    const res = await fetch(`${s.url}/ai_agent/send_message_stream?access_token=${encodeURIComponent(at)}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ conversation_id: conversationId, content: "And again?" }),
    });
    const text = await res.text();
    expect(text).not.toContain("SECRET");
    const reply = text
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l).result)
      .find((x) => x?.reply);
    expectRedacted(reply.reply.tool_calls);
  });

  it("the message list and the watch stream are redacted, over JSON and Connect; the account's are whole", async () => {
    const list = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: at,
    });
    expect(list.status).toBe(200);
    const withCalls = list.body.messages.filter((m: { tool_calls: string }) => m.tool_calls);
    expect(withCalls.length).toBeGreaterThan(0);
    for (const m of withCalls) expectRedacted(m.tool_calls);

    const { conversations } = rpcClients(s.url, "connect-binary");
    const asCustomer = { headers: { authorization: `Bearer ${at}` } };
    const page = await conversations.getMessagesForConversation({ conversationId }, asCustomer);
    for (const m of page.messages.filter((x) => x.toolCalls)) expectRedacted(m.toolCalls);

    const watch = await openNdjson(
      `${s.url}/watch_conversation?${new URLSearchParams({ conversation_id: conversationId, after_message_order: "0", access_token: at })}`,
    );
    let seen = 0;
    for (let line = await watch.next(); line?.result; line = await watch.next()) {
      if (line.result.message?.tool_calls) expectRedacted(line.result.message.tool_calls);
      if (line.result.message && ++seen === list.body.messages.length) break;
    }
    await watch.cancel();
    expect(seen).toBe(list.body.messages.length);

    // The account's reads keep the whole record: the arguments and the result's excerpt.
    const team = await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conversationId }, auth);
    const full = team.body.messages.find((m: { tool_calls: string }) => m.tool_calls).tool_calls as string;
    expect(full).toContain(SECRET_ARGUMENT);
    expect(full).toContain("RESULT-SECRET");
    const viaRpc = await conversations.getMessagesForConversation(
      { conversationId },
      { headers: { authorization: auth.authorization! } },
    );
    expect(viaRpc.messages.find((m) => m.toolCalls)!.toolCalls).toContain(SECRET_ARGUMENT);
  });

  it("another customer and another account read nothing of it", async () => {
    const other = (await issueTokens(s.url, a, "another-customer")).access_token;
    const asOther = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: other,
    });
    expect(asOther.status).toBe(404);
    expect(JSON.stringify(asOther.body)).not.toContain("SECRET");
    const b = await s.account();
    const otherAccount = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const asAccount = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: conversationId },
      otherAccount,
    );
    expect(asAccount.status).toBe(404);
    expect(JSON.stringify(asAccount.body)).not.toContain("SECRET");
  });
});
