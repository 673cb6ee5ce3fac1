import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AWAITING_APPROVAL, STEPS_EXHAUSTED } from "../../src/agents/openai-compatible.js";
import { type LlmStandIn, oneCallThen, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { idToken, issueTokens, send, teamToolCalls } from "../helpers/flows.js";
import { getJson, requestJson } from "../helpers/http.js";
import { selectRows } from "../helpers/rows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { ToolServer } from "../helpers/tool-server.js";

// Tools declared per chatbot and run end to end: a scripted OpenAI-compatible stand-in on loopback streams tool
// calls, the service runs them against a tool server on loopback that checks each call's Standard Webhooks
// signature, and the model gets the results back. On SQLite, and on PostgreSQL in the api-postgres project.

const MAX_STEPS = 3;
let llm: LlmStandIn;
let tools: ToolServer;
let s: TestServer;
let a: TestAccount;
let auth: Record<string, string>;
let n = 0;

const ORDER_SCHEMA = {
  type: "object",
  properties: { order_id: { type: "string", pattern: "^[0-9]+$" } },
  required: ["order_id"],
  additionalProperties: false,
};

async function createTool(body: Record<string, unknown>, chatbotId = a.chatbotId) {
  return requestJson(s.url, "POST", `/v1/account/chatbots/${chatbotId}/tools`, auth, body);
}

async function customer(): Promise<string> {
  return (await issueTokens(s.url, a, `customer-${++n}`)).access_token;
}

beforeAll(async () => {
  llm = await startLlmStandIn();
  tools = new ToolServer();
  await tools.start();
  s = await startServer({
    env: {
      AIAGENT_LLM_BASE_URL: llm.url,
      AIAGENT_LLM_MODEL: "stand-in-model",
      AIAGENT_AGENT_MAX_STEPS: String(MAX_STEPS),
    },
    overrides: { dispatch: false },
  });
  a = await s.account();
  auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
  const created = await createTool({
    name: "track_order",
    description: "Where an order is: its shipping status by order number.",
    parameters: JSON.stringify(ORDER_SCHEMA),
    url: tools.url("/track"),
  });
  expect(created.status).toBe(200);
  tools.secret = created.body.data.secret;
  // More tools on the same server; a test that calls one sets the server to that tool's secret (secretOf).
  for (const [name, path, extra] of [
    ["slow_lookup", "/slow", { timeout_ms: 300 }],
    ["refund_order", "/refund", { requires_approval: true }],
    ["internal_lookup", "", { url: "https://10.1.2.3/lookup" }],
  ] as const) {
    const r = await createTool({
      name,
      description: `The ${name} tool.`,
      parameters: JSON.stringify(ORDER_SCHEMA),
      url: tools.url(path),
      ...extra,
    });
    expect(r.status).toBe(200);
  }
});

afterAll(async () => {
  await s?.close(true);
  await tools?.close();
  await llm?.close();
});

beforeEach(() => {
  tools.behave = (c, res) => {
    if (c.path === "/slow") return; // never answers
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ order_id: c.call.arguments.order_id, status: "ships tomorrow" }));
  };
});

/** A new secret for the named tool (rotated, so the test knows it): the tool server verifies calls with it. */
async function secretOf(name: string): Promise<string> {
  const listed = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/tools`, {}, auth);
  const t = listed.body.data.tools.find((x: { name: string }) => x.name === name);
  const r = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/tools/${t.tool_id}`, auth, {
    rotate_secret: true,
  });
  return r.body.data.secret as string;
}

describe("a tool call, end to end", () => {
  it("runs against the tool server with the verified identity, returns to the model, and is recorded", async () => {
    const at = await customer();
    llm.behave(
      scripted([
        {
          text: ["Let me look that up."],
          toolCalls: [{ id: "call_a", name: "track_order", arguments: '{"order_id":"4471"}' }],
          tokens: 50,
        },
        { text: ["Your order 4471 ", "ships tomorrow."], tokens: 70 },
      ]),
    );
    const before = llm.requests.length;
    const r = await send(s.url, at, "Where is my order 4471?");
    expect(r.reply.content).toContain("Your order 4471 ships tomorrow.");

    // The tool server got one call, signed with the tool's secret, carrying the identity from the access token.
    const calls = tools.calls.filter((c) => c.call.tool === "track_order");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.verified).toBe(true);
    expect(calls[0]!.call).toMatchObject({
      chatbot_id: a.chatbotId,
      user_id: `customer-${n}`,
      conversation_id: r.conversation_id,
      arguments: { order_id: "4471" },
    });

    // The model was offered the tools (and the built-in handover), then given the result as a tool message.
    const [first, second] = llm.requests.slice(before);
    expect(first!.body.tools!.map((t) => t.function.name).sort()).toEqual(
      ["handover", "internal_lookup", "refund_order", "slow_lookup", "track_order"].sort(),
    );
    expect(second!.body.messages.at(-2)).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_a", function: { name: "track_order", arguments: '{"order_id":"4471"}' } }],
    });
    expect(second!.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_a" });
    expect(second!.body.messages.at(-1)!.content).toContain("ships tomorrow");

    // tool_calls holds the record: {id, name, arguments, status, result, duration_ms}, as the account reads it.
    const record = await teamToolCalls(s.url, auth, r.reply);
    expect(record).toEqual([
      {
        id: "call_a",
        name: "track_order",
        arguments: '{"order_id":"4471"}',
        status: "succeeded",
        result: expect.stringContaining("ships tomorrow"),
        duration_ms: expect.any(Number),
      },
    ]);
    // The customer's own answer carries each call's id, name and status only: not the arguments, not the result.
    const redacted = [{ id: "call_a", name: "track_order", status: "succeeded" }];
    expect(JSON.parse(r.reply.tool_calls)).toEqual(redacted);
    // So does the customer's message list (the frame's token), the account's keeps the whole record.
    const own = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: r.conversation_id,
      access_token: at,
    });
    expect(JSON.parse(own.body.messages.at(-1).tool_calls)).toEqual(redacted);
    expect(r.reply.tool_calls).not.toContain("4471");
    expect(r.reply.tool_calls).not.toContain("ships tomorrow");

    // On the next turn the model gets that answer back with its tool calls and their results.
    llm.behave(scripted([{ text: ["You're welcome."] }]));
    await send(s.url, at, "Thanks!", r.conversation_id);
    const next = llm.requests.at(-1)!.body.messages;
    const i = next.findIndex((m) => m.tool_calls?.[0]?.id === "call_a");
    expect(i).toBeGreaterThan(0);
    expect(next[i + 1]).toMatchObject({ role: "tool", tool_call_id: "call_a" });
    expect(next[i + 2]).toMatchObject({ role: "assistant", content: expect.stringContaining("ships tomorrow") });

    // The tokens the model reported count against the chatbot's day.
    const settings = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/agent_settings`, {}, auth);
    expect(settings.body.data.tokens_used_today).toBeGreaterThanOrEqual(120);
  });

  it("runs a step's parallel calls, each answered to the model", async () => {
    const at = await customer();
    llm.behave(
      scripted([
        {
          toolCalls: [
            { id: "p1", name: "track_order", arguments: '{"order_id":"1"}' },
            { id: "p2", name: "track_order", arguments: '{"order_id":"2"}' },
          ],
        },
        { text: ["Both ship tomorrow."] },
      ]),
    );
    const seen = tools.calls.length;
    const r = await send(s.url, at, "Orders 1 and 2?");
    expect(r.reply.content).toBe("Both ship tomorrow.");
    expect(
      tools.calls
        .slice(seen)
        .map((c) => c.call.arguments.order_id)
        .sort(),
    ).toEqual(["1", "2"]);
    const last = llm.requests.at(-1)!.body.messages;
    expect(last.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["p1", "p2"]);
    expect((await teamToolCalls(s.url, auth, r.reply)).map((c: { status: string }) => c.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);
  });
});

describe("each failure ends the call cleanly and tells the model", () => {
  const cases: {
    name: string;
    tool: string;
    args: string;
    status: string;
    told: RegExp;
    server?: (res: import("node:http").ServerResponse) => void;
  }[] = [
    {
      name: "a schema violation",
      tool: "track_order",
      args: '{"order_id":"abc"}',
      status: "invalid_arguments",
      told: /schema/,
    },
    {
      name: "arguments that are not JSON",
      tool: "track_order",
      args: "{order",
      status: "invalid_arguments",
      told: /not JSON/,
    },
    { name: "a timeout", tool: "slow_lookup", args: '{"order_id":"7"}', status: "timeout", told: /within 300 ms/ },
    {
      name: "a 500",
      tool: "track_order",
      args: '{"order_id":"7"}',
      status: "failed",
      told: /HTTP 500/,
      server: (res) => res.writeHead(500).end("boom"),
    },
    {
      name: "an oversized answer",
      tool: "track_order",
      args: '{"order_id":"7"}',
      status: "too_large",
      told: /larger than/,
      server: (res) => res.writeHead(200).end("x".repeat(64 * 1024)),
    },
    {
      name: "a private address",
      tool: "internal_lookup",
      args: '{"order_id":"7"}',
      status: "refused_address",
      told: /not a public address/,
    },
    { name: "an unknown tool", tool: "drop_tables", args: "{}", status: "unknown_tool", told: /no tool named/ },
  ];
  it.each(cases)("$name", async (c) => {
    if (c.tool === "slow_lookup") tools.secret = await secretOf("slow_lookup");
    else if (c.tool === "track_order") tools.secret = await secretOf("track_order");
    if (c.server) {
      const answer = c.server;
      tools.behave = (_call, res) => answer(res);
    }
    const at = await customer();
    llm.behave(oneCallThen({ id: "f1", name: c.tool, arguments: c.args }, "Sorry, I could not check that."));
    const seen = tools.calls.length;
    const r = await send(s.url, at, "Where is my order?");
    expect(r.reply.content).toBe("Sorry, I could not check that.");
    const [record] = await teamToolCalls(s.url, auth, r.reply);
    expect(record).toMatchObject({ id: "f1", name: c.tool, status: c.status });
    const told = llm.requests.at(-1)!.body.messages.at(-1)!;
    expect(told).toMatchObject({ role: "tool", tool_call_id: "f1" });
    expect(told.content).toMatch(c.told);
    // Nothing reached the tool server when the arguments, the tool or the address were refused.
    if (["invalid_arguments", "unknown_tool", "refused_address"].includes(c.status))
      expect(tools.calls.length).toBe(seen);
  });
});

describe("bounds and approval", () => {
  it("stops after the step bound, however often the model asks for tools", async () => {
    tools.secret = await secretOf("track_order");
    const at = await customer();
    llm.behave(scripted([{ toolCalls: [{ id: "loop", name: "track_order", arguments: '{"order_id":"9"}' }] }]));
    const before = llm.requests.length;
    const r = await send(s.url, at, "Keep looking");
    expect(llm.requests.length - before).toBe(MAX_STEPS);
    expect(r.reply.content).toBe(STEPS_EXHAUSTED);
    const statuses = (await teamToolCalls(s.url, auth, r.reply)).map((c: { status: string }) => c.status);
    expect(statuses).toEqual([...Array(MAX_STEPS - 1).fill("succeeded"), "not_run"]);
  });

  it("a call that needs approval is not made: it is recorded as awaiting approval and the customer told", async () => {
    const at = await customer();
    llm.behave(scripted([{ toolCalls: [{ id: "r1", name: "refund_order", arguments: '{"order_id":"5"}' }] }]));
    const seen = tools.calls.length;
    const r = await send(s.url, at, "Refund order 5");
    expect(tools.calls.length).toBe(seen);
    expect(r.reply.content).toBe(AWAITING_APPROVAL);
    expect((await teamToolCalls(s.url, auth, r.reply))[0]).toMatchObject({ id: "r1", status: "awaiting_approval" });
  });
});

describe("the model hands over", () => {
  it("calls handover: the customer is told, the team's note says why, and the agent stays quiet", async () => {
    const at = await customer();
    llm.behave(scripted([{ toolCalls: [{ id: "h1", name: "handover", arguments: '{"reason":"wants a refund"}' }] }]));
    const r = await send(s.url, at, "This is unacceptable");
    expect(r.reply.content).toMatch(/person from our team/);
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: r.conversation_id }, auth);
    expect(notes.body.data.notes.map((x: { content: string }) => x.content).join("\n")).toContain("wants a refund");
    const before = llm.requests.length;
    const again = await send(s.url, at, "Hello?", r.conversation_id);
    expect(again.reply).toBeUndefined();
    expect(llm.requests.length).toBe(before);
  });
});

describe("declaring tools", () => {
  it("refuses what is not a tool, naming the field, and changes nothing", async () => {
    const listed = async () =>
      (await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/tools`, {}, auth)).body.data.tools.length;
    const count = await listed();
    const base = { name: "t", description: "d", url: tools.url("/x") };
    for (const [body, field] of [
      [{ ...base, parameters: "{not json" }, "parameters"],
      [{ ...base, parameters: '{"type":"string"}' }, "parameters"],
      [{ ...base, parameters: '{"type":"object","properties":{"a":{"type":"nonsense"}}}' }, "parameters"],
      [{ ...base, name: "handover" }, "name"],
      [{ ...base, name: "has space" }, "name"],
      [{ ...base, description: "" }, "description"],
      [{ ...base, url: "ftp://x.example/" }, "url"],
      [{ ...base, timeout_ms: 50 }, "timeout_ms"],
      [{ ...base, name: "track_order" }, "name"],
    ] as const) {
      const r = await createTool(body);
      expect(r.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body.message).toContain(field);
    }
    expect(await listed()).toBe(count);
  });

  it("lists without secrets, updates, rotates and deletes; another account sees none of it", async () => {
    const made = await createTool({
      name: "temp_tool",
      description: "Temporary.",
      url: tools.url("/temp"),
      method: "GET",
    });
    expect(made.body.data.secret).toMatch(/^whsec_/);
    const id = made.body.data.tool.tool_id;
    // Stored encrypted: no row of the database holds the secret.
    const rows = await selectRows(s.app, "SELECT * FROM agent_tools");
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(made.body.data.secret);
    expect(JSON.stringify(rows)).not.toContain(made.body.data.secret.slice(6));
    const listed = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/tools`, {}, auth);
    expect(JSON.stringify(listed.body)).not.toContain(made.body.data.secret);
    const updated = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/tools/${id}`, auth, {
      description: "Changed.",
    });
    expect(updated.body.data).toMatchObject({ tool: { description: "Changed.", method: "GET" }, secret: "" });

    const b = await s.account();
    const bAuth = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const foreign = [
      await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/tools`, {}, bAuth),
      await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/tools/${id}`, bAuth, { description: "x" }),
      await requestJson(s.url, "DELETE", `/v1/account/chatbots/${a.chatbotId}/tools/${id}`, bAuth),
      await requestJson(s.url, "DELETE", `/v1/account/chatbots/${b.chatbotId}/tools/${id}`, bAuth),
      await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/agent_settings`, {}, bAuth),
    ];
    for (const r of foreign) expect(r.status).toBe(404);

    const gone = await requestJson(s.url, "DELETE", `/v1/account/chatbots/${a.chatbotId}/tools/${id}`, auth);
    expect(gone.status).toBe(200);
    const after = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/tools`, {}, auth);
    expect(after.body.data.tools.map((t: { tool_id: string }) => t.tool_id)).not.toContain(id);
  });

  it("a GET tool gets the signed call in its query string", async () => {
    const made = await createTool({
      name: "stock_level",
      description: "Stock of a product.",
      url: tools.url("/stock"),
      method: "GET",
      parameters: JSON.stringify({ type: "object", properties: { sku: { type: "string" } } }),
    });
    tools.secret = made.body.data.secret;
    const at = await customer();
    llm.behave(oneCallThen({ id: "g1", name: "stock_level", arguments: '{"sku":"A-1"}' }, "In stock."));
    const r = await send(s.url, at, "Is A-1 in stock?");
    expect(r.reply.content).toBe("In stock.");
    const c = tools.calls.at(-1)!;
    expect(c).toMatchObject({ method: "GET", path: "/stock", verified: true, call: { arguments: { sku: "A-1" } } });
  });
});
