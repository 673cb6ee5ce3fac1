import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, oneCallThen, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { idToken, issueTokens, send, teamToolCalls } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { addSource, settled } from "../knowledge/support.js";

// The built-in search_knowledge tool in the OpenAI-compatible agent's loop: offered when the chatbot has knowledge
// sources, its arguments checked, its passages returned to the model with their source ids, and the reply citing
// them with their provenance. A scripted OpenAI-compatible stand-in on loopback plays the model. On SQLite, and on
// PostgreSQL in the api-postgres project.

let llm: LlmStandIn;
let s: TestServer;
let a: TestAccount;
let sourceId: string;
let n = 0;

const CARE = "https://shop.example/care";

beforeAll(async () => {
  llm = await startLlmStandIn();
  s = await startServer({
    env: { AIAGENT_LLM_BASE_URL: llm.url, AIAGENT_LLM_MODEL: "stand-in-model" },
    overrides: { dispatch: false },
  });
  a = await s.account();
  const token = await idToken(s.url, a);
  const r = await addSource(s.url, token, a.chatbotId, {
    kind: "snippets",
    snippets: [
      { title: "Chain care", url: CARE, snippet: "Oil the chain every 300 kilometres with a dry lubricant." },
      { title: "Tyre pressure", url: `${CARE}#tyres`, snippet: "Inflate gravel tyres to three bar." },
    ],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  sourceId = r.body.data.source_id;
  await settled(s.url, token, a.chatbotId, sourceId);
});

afterAll(async () => {
  await s?.close(true);
  await llm?.close();
});

async function customer(account: TestAccount = a): Promise<string> {
  return (await issueTokens(s.url, account, `searcher-${++n}`)).access_token;
}

interface Doc {
  title: string;
  url: string;
  snippet: string;
  source_id?: string;
  source_title?: string;
  excerpt?: string;
  score?: number;
  knowledge_version?: number;
}

describe("search_knowledge in the model's tool loop", () => {
  it("is offered, runs, returns the passages with their source ids, and the answer cites them", async () => {
    const at = await customer();
    llm.behave(
      scripted([
        {
          toolCalls: [{ id: "s1", name: "search_knowledge", arguments: '{"query":"how often to oil the chain"}' }],
        },
        { text: ["Oil the chain every 300 km [K1]."] },
      ]),
    );
    const before = llm.requests.length;
    const r = await send(s.url, at, "How often should I oil my chain?");
    expect(r.reply.content).toBe("Oil the chain every 300 km [K1].");

    // Offered beside handover; the passages came back to the model as the tool's answer, with their source ids.
    const [first, second] = llm.requests.slice(before);
    const offered = first!.body.tools!.find((t) => t.function.name === "search_knowledge");
    expect(offered?.function.parameters).toMatchObject({ required: ["query"] });
    const told = second!.body.messages.at(-1)!;
    expect(told).toMatchObject({ role: "tool", tool_call_id: "s1" });
    const passages = JSON.parse(told.content!).passages;
    expect(passages[0]).toMatchObject({ cite_as: "[K1]", source_id: sourceId, title: "Chain care" });
    expect(passages[0].text).toContain("every 300 kilometres");

    // The reply's documents are the passages it cited, with their provenance beside the documented fields.
    const docs = r.reply.documents as Doc[];
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({
      title: "Chain care",
      source_id: sourceId,
      knowledge_version: 1,
      snippet: expect.stringContaining("every 300 kilometres"),
      excerpt: expect.stringContaining("every 300 kilometres"),
    });
    expect(docs[0]!.url).toContain(CARE);
    expect(docs[0]!.score).toBeGreaterThanOrEqual(0.5);

    // tool_calls records the call and its outcome (the account's read: the customer's has its id, name and status).
    const auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
    expect(await teamToolCalls(s.url, auth, r.reply)).toEqual([
      {
        id: "s1",
        name: "search_knowledge",
        arguments: '{"query":"how often to oil the chain"}',
        status: "succeeded",
        result: expect.stringContaining(sourceId),
        duration_ms: expect.any(Number),
      },
    ]);
    // As stored: the conversation's messages show the same documents.
    const page = await getJson(s.url, "/get_messages_for_conversation", { conversation_id: r.conversation_id }, auth);
    expect(page.body.messages.at(-1).documents[0]).toMatchObject({ source_id: sourceId, knowledge_version: 1 });
  });

  it("refuses arguments that do not match its schema and tells the model; nothing is cited", async () => {
    const at = await customer();
    llm.behave(
      oneCallThen(
        { id: "bad", name: "search_knowledge", arguments: '{"q":"chain","limit":99}' },
        "I could not look that up.",
      ),
    );
    const r = await send(s.url, at, "Chain?");
    const told = llm.requests.at(-1)!.body.messages.at(-1)!;
    expect(told).toMatchObject({ role: "tool", tool_call_id: "bad" });
    expect(told.content).toMatch(/do not match search_knowledge's schema/);
    expect(JSON.parse(r.reply.tool_calls)[0]).toMatchObject({ name: "search_knowledge", status: "invalid_arguments" });
    expect(r.reply.documents ?? []).toEqual([]);
  });

  it("tells the model when nothing answers, so it says it does not know", async () => {
    const at = await customer();
    llm.behave(
      oneCallThen(
        { id: "none", name: "search_knowledge", arguments: '{"query":"skateboard wheels"}' },
        "I don't know.",
      ),
    );
    const r = await send(s.url, at, "Do you sell skateboard wheels?");
    const told = JSON.parse(llm.requests.at(-1)!.body.messages.at(-1)!.content!);
    expect(told.passages).toEqual([]);
    expect(told.note).toMatch(/do not know/);
    expect(r.reply.documents ?? []).toEqual([]);
  });

  it("is not offered to a chatbot without knowledge sources", async () => {
    const other = await s.account();
    llm.behave(scripted([{ text: ["Hello."] }]));
    await send(s.url, await customer(other), "Hi");
    const names = (llm.requests.at(-1)!.body.tools ?? []).map((t) => t.function.name);
    expect(names).toContain("handover");
    expect(names).not.toContain("search_knowledge");
  });
});
