import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AWAITING_APPROVAL } from "../../src/agents/openai-compatible.js";
import { type LlmStandIn, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { ToolServer } from "../helpers/tool-server.js";

// A tool marked "needs approval": the call waits, stored, for a person of the team; approved it runs and its result
// goes back to the model, refused the model is told; the reply that follows reaches the frame. The wait survives a
// restart. Driven by the scripted OpenAI-compatible stand-in and a tool server on loopback; on SQLite, and on
// PostgreSQL in the api-postgres project.

const ENV = { AIAGENT_LLM_BASE_URL: "", AIAGENT_LLM_MODEL: "stand-in-model" };
let llm: LlmStandIn;
let tools: ToolServer;
let s: TestServer;
let a: TestAccount;
let auth: Record<string, string>;
let operator: Record<string, string>;
let n = 0;

const SCHEMA = JSON.stringify({
  type: "object",
  properties: { order_id: { type: "string" } },
  required: ["order_id"],
});

async function start(dir?: string) {
  s = await startServer({
    env: { ...ENV, AIAGENT_LLM_BASE_URL: llm.url },
    overrides: { dispatch: false },
    ...(dir ? { dir } : {}),
  });
}

beforeAll(async () => {
  llm = await startLlmStandIn();
  tools = new ToolServer();
  await tools.start();
  await start();
  a = await s.account();
  const admin = await idToken(s.url, a);
  auth = { authorization: `Bearer ${admin}` };
  operator = {
    authorization: `Bearer ${(await addMember(s.url, admin, "approver@approvals.example", "operator")).idToken}`,
  };
  const made = await requestJson(s.url, "POST", `/v1/account/chatbots/${a.chatbotId}/tools`, auth, {
    name: "refund_order",
    description: "Refunds an order.",
    parameters: SCHEMA,
    url: tools.url("/refund"),
    requires_approval: true,
  });
  expect(made.status).toBe(200);
  tools.secret = made.body.data.secret;
  tools.behave = (c, res) =>
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ refunded: c.call.arguments.order_id, amount: "19.90 EUR" }));
});

afterAll(async () => {
  await s?.close(true);
  await tools?.close();
  await llm?.close();
});

/** A customer asks for a refund; the model calls refund_order, which waits. Answers the conversation and the call. */
async function waitingRefund(order: string) {
  const at = (await issueTokens(s.url, a, `refund-customer-${++n}`)).access_token;
  const callId = `refund_${n}`;
  llm.behave(scripted([{ toolCalls: [{ id: callId, name: "refund_order", arguments: `{"order_id":"${order}"}` }] }]));
  const seen = tools.calls.length;
  const r = await send(s.url, at, `Please refund order ${order}`);
  expect(tools.calls.length).toBe(seen);
  expect(r.reply.content).toBe(AWAITING_APPROVAL);
  expect(JSON.parse(r.reply.tool_calls)).toEqual([
    expect.objectContaining({ id: callId, status: "awaiting_approval" }),
  ]);
  return { at, conversationId: r.conversation_id as string, callId };
}

const approvals = (conversationId: string, headers = operator) =>
  getJson(s.url, "/list_tool_approvals", { conversation_id: conversationId }, headers);
const decide = (conversationId: string, callId: string, decision: string, headers = operator) =>
  postJson(s.url, "/decide_tool_approval", { conversation_id: conversationId, call_id: callId, decision }, headers);

/** The customer's own view of the conversation, as the frame reads it. */
async function frameMessages(at: string, conversationId: string) {
  const r = await getJson(s.url, "/get_messages_for_conversation", {
    conversation_id: conversationId,
    access_token: at,
    limit: 100,
  });
  expect(r.status).toBe(200);
  return r.body.messages as { role: string; content: string; tool_calls: string }[];
}

describe("a call that needs approval", () => {
  it("waits for an operator, who sees its name and arguments; approved, it runs and the model answers from it", async () => {
    const w = await waitingRefund("881");
    const listed = await approvals(w.conversationId);
    expect(listed.status).toBe(200);
    expect(listed.body.data.approvals).toEqual([
      expect.objectContaining({
        call_id: w.callId,
        tool_name: "refund_order",
        arguments: '{"order_id":"881"}',
        status: "pending",
        decided_by: "",
      }),
    ]);

    llm.behave(scripted([{ text: ["Your refund of 19.90 EUR for order 881 is on its way."] }]));
    const before = llm.requests.length;
    const seen = tools.calls.length;
    const r = await decide(w.conversationId, w.callId, "approve");
    expect(r.status).toBe(200);
    expect(r.body.data.approval).toMatchObject({ status: "approved", decided_by: "approver@approvals.example" });

    // The call ran once, signed, with the customer's identity from the access token.
    const made = tools.calls.slice(seen);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({
      verified: true,
      call: { user_id: `refund-customer-${n}`, arguments: { order_id: "881" } },
    });
    // The model got the call and its result, once, after the customer's question.
    expect(llm.requests.length - before).toBe(1);
    const told = llm.requests.at(-1)!.body.messages;
    expect(told.filter((m) => m.tool_calls?.[0]?.id === w.callId)).toHaveLength(1);
    expect(told.at(-2)).toMatchObject({ role: "assistant", tool_calls: [{ id: w.callId }] });
    expect(told.at(-1)).toMatchObject({ role: "tool", tool_call_id: w.callId });
    expect(told.at(-1)!.content).toContain("19.90 EUR");

    // The reply is stored with the decided call folded under it, and reaches the frame.
    expect(r.body.data.reply.content).toContain("on its way");
    expect(JSON.parse(r.body.data.reply.tool_calls)[0]).toMatchObject({ id: w.callId, status: "succeeded" });
    const seenByCustomer = await frameMessages(w.at, w.conversationId);
    expect(seenByCustomer.at(-1)!.content).toContain("on its way");
    expect((await approvals(w.conversationId)).body.data.approvals[0].status).toBe("approved");

    // Decided once: a second decision (approve or refuse) changes nothing, and the call is not made again.
    for (const again of ["approve", "refuse"]) {
      const second = await decide(w.conversationId, w.callId, again);
      expect(second.status).toBe(400);
      expect(second.body.message).toContain("call_id");
    }
    expect(tools.calls.length).toBe(seen + 1);

    // On the next turn the model sees the call once, decided.
    llm.behave(scripted([{ text: ["Anything else?"] }]));
    await send(s.url, w.at, "Thanks", w.conversationId);
    const next = llm.requests.at(-1)!.body.messages;
    expect(next.filter((m) => m.tool_calls?.[0]?.id === w.callId)).toHaveLength(1);
  });

  it("refused: the call is not made, the model is told, and its answer reaches the frame", async () => {
    const w = await waitingRefund("882");
    llm.behave(scripted([{ text: ["I'm sorry, the refund was not approved."] }]));
    const seen = tools.calls.length;
    const r = await decide(w.conversationId, w.callId, "refuse");
    expect(r.status).toBe(200);
    expect(tools.calls.length).toBe(seen);
    const told = llm.requests.at(-1)!.body.messages.at(-1)!;
    expect(told).toMatchObject({ role: "tool", tool_call_id: w.callId });
    expect(told.content).toMatch(/refused/);
    expect(JSON.parse(r.body.data.reply.tool_calls)[0]).toMatchObject({ id: w.callId, status: "refused" });
    expect((await frameMessages(w.at, w.conversationId)).at(-1)!.content).toContain("not approved");
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: w.conversationId }, auth);
    expect(notes.body.data.notes.map((x: { content: string }) => x.content)).toContain(
      "Refused the AI agent's call of refund_order.",
    );
  });

  it("refuses bad input naming the field, and another account's people cannot see or decide the call", async () => {
    const w = await waitingRefund("883");
    for (const [body, field] of [
      [{ conversation_id: w.conversationId, call_id: w.callId, decision: "maybe" }, "decision"],
      [{ conversation_id: w.conversationId, call_id: w.callId }, "decision"],
      [{ conversation_id: w.conversationId, call_id: "", decision: "approve" }, "call_id"],
      [{ conversation_id: "not-a-uuid", call_id: w.callId, decision: "approve" }, "conversation_id"],
    ] as const) {
      const r = await postJson(s.url, "/decide_tool_approval", body, operator);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toContain(field);
    }
    expect((await decide(w.conversationId, "no_such_call", "approve")).status).toBe(404);

    const b = await s.account();
    const other = { authorization: `Bearer ${await idToken(s.url, b)}` };
    expect((await approvals(w.conversationId, other)).status).toBe(404);
    expect((await decide(w.conversationId, w.callId, "approve", other)).status).toBe(404);
    // The customer's own token is no operator's.
    const asCustomer = await postJson(s.url, `/decide_tool_approval?access_token=${encodeURIComponent(w.at)}`, {
      conversation_id: w.conversationId,
      call_id: w.callId,
      decision: "approve",
    });
    expect(asCustomer.status).toBe(401);
    expect((await approvals(w.conversationId)).body.data.approvals[0].status).toBe("pending");
  });

  it("while the approved call runs the customer's watch shows the looking-up line, and the model sees all said since", async () => {
    const w = await waitingRefund("885");
    // The customer writes on while the call waits: the agent's answer to that is not the point (it says "wait").
    llm.behave(scripted([{ text: ["The team is looking at it."] }]));
    await send(s.url, w.at, "Any news on my refund?", w.conversationId);
    const listed = await frameMessages(w.at, w.conversationId);
    const stream = await openNdjson(
      `${s.url}/watch_conversation?${new URLSearchParams({
        conversation_id: w.conversationId,
        after_message_order: String(listed.length),
        access_token: w.at,
      })}`,
    );
    expect((await stream.next())?.result?.conversation).toBeDefined();
    llm.behave(scripted([{ text: ["Your refund for order 885 is on its way."] }]));
    const r = await decide(w.conversationId, w.callId, "approve");
    expect(r.status).toBe(200);
    // On the customer's stream: the looking-up line, then the reply with its tool calls redacted (id, name, status).
    const events: any[] = [];
    for (let line = await stream.next(); line?.result; line = await stream.next()) {
      events.push(line.result);
      if (line.result.message?.role === "assistant") break;
    }
    await stream.cancel();
    const kinds = events.map((e) => (e.activity ? `activity:${e.activity}` : e.message ? "message" : "other"));
    expect(kinds.filter((k) => k !== "other")).toEqual(["activity:looking_up", "message"]);
    const reply = events.at(-1).message;
    expect(reply.content).toContain("on its way");
    expect(JSON.parse(reply.tool_calls)).toEqual([{ id: w.callId, name: "refund_order", status: "succeeded" }]);
    expect(JSON.stringify(events)).not.toContain("19.90");
    // The model was shown the whole conversation: the question asked while the call waited, then the call's result.
    const told = llm.requests.at(-1)!.body.messages;
    const asked = told.findIndex((m) => m.role === "user" && m.content === "Any news on my refund?");
    const result = told.findIndex((m) => m.role === "tool" && m.tool_call_id === w.callId);
    expect(asked).toBeGreaterThan(0);
    expect(result).toBeGreaterThan(asked);
    expect(told.filter((m) => m.tool_calls?.[0]?.id === w.callId)).toHaveLength(1);
  });

  it("the wait survives a restart: after it, the operator approves and the answer reaches the frame", async () => {
    const w = await waitingRefund("884");
    await s.close(false);
    await start(s.dir);
    llm.behave(scripted([{ text: ["Refunded after the restart."] }]));
    const seen = tools.calls.length;
    const listed = await approvals(w.conversationId);
    expect(listed.body.data.approvals.map((x: { status: string }) => x.status)).toEqual(["pending"]);
    const r = await decide(w.conversationId, w.callId, "approve");
    expect(r.status).toBe(200);
    expect(tools.calls.length).toBe(seen + 1);
    expect((await frameMessages(w.at, w.conversationId)).at(-1)!.content).toBe("Refunded after the restart.");
  });
});
