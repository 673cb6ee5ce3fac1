import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { ToolServer } from "../helpers/tool-server.js";

// A draft of a chatbot's agent, replayed against the chatbot's latest real conversations and a test set, side by side
// with the live configuration, then published or dropped. The built-in agent makes the replay deterministic; a
// chatbot on the scripted OpenAI-compatible stand-in shows that a replay calls no tool. On SQLite, and on PostgreSQL
// in the api-postgres project.

const KNOWLEDGE = [
  { title: "Shipping", url: "https://shop.example/shipping", snippet: "Orders ship within 2 business days." },
  { title: "Returns", url: "https://shop.example/returns", snippet: "Returns are free within 30 days of delivery." },
  { title: "Payment", url: "https://shop.example/payment", snippet: "We accept credit cards and PayPal payments." },
  { title: "Warranty", url: "https://shop.example/warranty", snippet: "Every product has a two year warranty." },
];
const QUESTIONS = {
  shipping: "How long does shipping take for orders?",
  returns: "Can I make returns after delivery?",
  payment: "Which payments do you accept, PayPal?",
  warranty: "How long is the warranty on a product?",
};

let s: TestServer;
let a: TestAccount;
let auth: Record<string, string>;
let llm: LlmStandIn;
let tools: ToolServer;

const draftPath = (chatbotId = a.chatbotId) => `/v1/account/chatbots/${chatbotId}/agent_draft`;
const replay = (body: Record<string, unknown>, chatbotId = a.chatbotId, headers = auth) =>
  postJson(s.url, `${draftPath(chatbotId)}:replay`, body, headers);

beforeAll(async () => {
  llm = await startLlmStandIn();
  tools = new ToolServer();
  await tools.start();
  s = await startServer({ overrides: { dispatch: false } });
  a = await s.account({ knowledge: KNOWLEDGE });
  auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
});

afterAll(async () => {
  await s?.close(true);
  await tools?.close();
  await llm?.close();
});

describe("replaying a draft", () => {
  it("of 20 past conversations with one knowledge entry changed shows exactly the answers that change", async () => {
    // 20 real conversations, 5 on each topic, answered live by the built-in agent.
    const topics = Object.keys(QUESTIONS) as (keyof typeof QUESTIONS)[];
    const asked = new Map<string, string>();
    for (let i = 0; i < 20; i++) {
      const topic = topics[i % 4]!;
      const at = (await issueTokens(s.url, a, `replay-customer-${i}`)).access_token;
      // A second apart: "the latest 20" has one order.
      s.clock.advance(1000);
      const r = await send(s.url, at, QUESTIONS[topic]);
      asked.set(r.conversation_id, topic);
    }

    // The draft changes one entry: returns are now free for 60 days.
    const changed = KNOWLEDGE.map((k) =>
      k.title === "Returns" ? { ...k, snippet: "Returns are free within 60 days of delivery." } : k,
    );
    const put = await requestJson(s.url, "PATCH", draftPath(), auth, { knowledge: { snippets: changed } });
    expect(put.status).toBe(200);
    expect(put.body.data.knowledge[1].snippet).toContain("60 days");
    // Customers still get the live configuration.
    s.clock.advance(1000);
    const live = await send(s.url, (await issueTokens(s.url, a, "still-live")).access_token, QUESTIONS.returns);
    expect(live.reply.content).toContain("30 days");

    const r = await replay({ last_conversations: 20 });
    expect(r.status).toBe(200);
    const items = r.body.data.items as {
      conversation_id: string;
      question: string;
      live: { content: string; documents: { title: string }[] };
      draft: { content: string; documents: { title: string }[] };
      changed: boolean;
      differences: string[];
    }[];
    // The last 20 conversations: the 20 above and the one just asked (the oldest falls out).
    expect(items).toHaveLength(20);
    const byTopic = items.map((i) => [asked.get(i.conversation_id) ?? "returns", i.changed] as const);
    expect(byTopic.filter(([, c]) => c).every(([t]) => t === "returns")).toBe(true);
    expect(byTopic.filter(([t, c]) => t === "returns" && !c)).toEqual([]);
    // 5 of the 20 were about returns, and so is the one asked since: exactly those 6 change.
    expect(r.body.data.changed).toBe(6);
    const one = items.find((i) => i.changed)!;
    expect(one.live.content).toContain("30 days");
    expect(one.draft.content).toContain("60 days");
    expect(one.differences).toEqual(["content", "documents"]);
    expect(one.live.documents.map((d) => d.title)).toEqual(["Returns"]);
    // The built-in agent makes it deterministic: the same replay again gives the same result.
    const again = await replay({ last_conversations: 20 });
    expect(again.body.data).toEqual(r.body.data);

    // A test set: the facts a good answer has, checked on both sides.
    const set = await replay({
      cases: [
        { question: QUESTIONS.returns, expected_facts: ["60 days"], expected_sources: ["Returns"] },
        { question: QUESTIONS.shipping, expected_facts: ["2 business days"] },
      ],
    });
    expect(set.status).toBe(200);
    const [returns, shipping] = set.body.data.items;
    expect(returns.live).toMatchObject({ passes: false, missing: ["fact: 60 days"] });
    expect(returns.draft).toMatchObject({ passes: true, missing: [] });
    expect(shipping).toMatchObject({ changed: false, live: { passes: true }, draft: { passes: true } });

    // Published: customers get it, and the draft is gone.
    expect((await postJson(s.url, `${draftPath()}:publish`, {}, auth)).status).toBe(200);
    const after = await send(s.url, (await issueTokens(s.url, a, "after-publish")).access_token, QUESTIONS.returns);
    expect(after.reply.content).toContain("60 days");
    expect((await getJson(s.url, draftPath(), {}, auth)).status).toBe(404);
  });

  it("a dropped draft changes nothing live", async () => {
    await requestJson(s.url, "PATCH", draftPath(), auth, { instructions: "Be terse." });
    expect((await getJson(s.url, draftPath(), {}, auth)).body.data.instructions).toBe("Be terse.");
    expect((await requestJson(s.url, "DELETE", draftPath(), auth)).status).toBe(200);
    expect((await getJson(s.url, draftPath(), {}, auth)).status).toBe(404);
    const settings = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/agent_settings`, {}, auth);
    expect(settings.body.data.instructions).toBe("");
  });

  it("with a model: the draft's model and instructions are asked, and no tool is called (dry_run)", async () => {
    const bot = await s.app.accounts.createChatbot(a.email, "Model bot", ["https://shop.example"], KNOWLEDGE);
    await s.app.accounts.updateChatbot(a.email, bot.chatbotId, {
      agent: { kind: "openai_compatible", baseUrl: llm.url, model: "model-live", apiKey: "" },
    });
    const made = await requestJson(s.url, "POST", `/v1/account/chatbots/${bot.chatbotId}/tools`, auth, {
      name: "track_order",
      description: "Where an order is.",
      url: tools.url("/track"),
    });
    expect(made.status).toBe(200);
    await requestJson(s.url, "PATCH", draftPath(bot.chatbotId), auth, {
      model: "model-draft",
      instructions: "Always sign with Ava.",
    });
    // Each side: a tool call, then (told its outcome) an answer.
    llm.behave((req, res) =>
      scripted([
        req.body.messages.at(-1)?.role === "tool"
          ? { text: ["I could not check that."] }
          : { toolCalls: [{ id: "d1", name: "track_order", arguments: "{}" }] },
      ])(req, res),
    );
    const before = llm.requests.length;
    const r = await replay(
      { cases: [{ question: "Where is my order?", expected_tools: ["track_order"] }] },
      bot.chatbotId,
    );
    expect(r.status).toBe(200);
    expect(tools.calls).toHaveLength(0);
    const [item] = r.body.data.items;
    for (const side of [item.live, item.draft]) {
      expect(JSON.parse(side.tool_calls)).toEqual([
        expect.objectContaining({
          name: "track_order",
          status: "dry_run",
          result: expect.stringContaining(tools.url("/track")),
        }),
      ]);
      expect(side.passes).toBe(true);
    }
    const sent = llm.requests.slice(before);
    expect(sent.map((x) => x.body.model)).toEqual(["model-live", "model-live", "model-draft", "model-draft"]);
    expect(sent[2]!.body.messages[0]!.content).toContain("Always sign with Ava.");
    expect(sent[0]!.body.messages[0]!.content).not.toContain("Always sign with Ava.");
  });

  it("refuses bad input naming the field, and another account cannot read, change or replay the draft", async () => {
    await requestJson(s.url, "PATCH", draftPath(), auth, { instructions: "Draft of A." });
    for (const [body, field] of [
      [{ last_conversations: 51 }, "last_conversations"],
      [{ cases: [{ question: "" }] }, "question"],
    ] as const) {
      const r = await replay(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message).toContain(field);
    }
    const bad = await requestJson(s.url, "PATCH", draftPath(), auth, {
      knowledge: { snippets: [{ title: "x", url: "ftp://x", snippet: "y" }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("knowledge");

    const b = await s.account();
    const other = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const foreign = [
      await getJson(s.url, draftPath(), {}, other),
      await requestJson(s.url, "PATCH", draftPath(), other, { instructions: "Mine now." }),
      await requestJson(s.url, "DELETE", draftPath(), other),
      await postJson(s.url, `${draftPath()}:publish`, {}, other),
      await replay({ cases: [{ question: "hi" }] }, a.chatbotId, other),
    ];
    for (const r of foreign) expect(r.status).toBe(404);
    expect((await getJson(s.url, draftPath(), {}, auth)).body.data.instructions).toBe("Draft of A.");
  });
});
