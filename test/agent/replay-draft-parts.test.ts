import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { closeAgentTest, ToolServer } from "../helpers/tool-server.js";
import { settled } from "../knowledge/support.js";

// A draft holds knowledge sources and tools too: which of the chatbot's sources it leaves out, sources added to it
// only (indexed, searched by the replay's draft side only until published), and its tool list (the replay offers the
// draft's tools, each call dry_run; publishing applies them, new tools with a secret shown once). On SQLite, and on
// PostgreSQL in the api-postgres project.

const TOPICS = {
  shipping: { q: "How long does shipping take for orders?", snippet: "Shipping for orders takes 2 business days." },
  returns: { q: "Can I make returns after delivery?", snippet: "Returns after delivery are free within 30 days." },
  payment: { q: "Which payments do you accept, PayPal?", snippet: "We accept credit cards and PayPal payments." },
  warranty: { q: "How long is the warranty on a product?", snippet: "Every product has a two year warranty." },
};
type Topic = keyof typeof TOPICS;

let s: TestServer;
let a: TestAccount;
let token: string;
let auth: Record<string, string>;
const draftPath = (chatbotId = a.chatbotId) => `/v1/account/chatbots/${chatbotId}/agent_draft`;

/** A snippets source of one passage, indexed. */
async function source(title: string, snippet: string, chatbotId = a.chatbotId, path = "knowledge_sources") {
  const r = await postJson(
    s.url,
    `/v1/account/chatbots/${chatbotId}/${path}`,
    { kind: "snippets", title, snippets: [{ title, url: `https://shop.example/${title.toLowerCase()}`, snippet }] },
    auth,
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.source_id as string;
}

// The model's stand-in and the tool server, for the draft's tools.
let llm: LlmStandIn;
let tools: ToolServer;

beforeAll(async () => {
  llm = await startLlmStandIn();
  tools = new ToolServer();
  await tools.start();
  s = await startServer({ overrides: { dispatch: false } });
  a = await s.account();
  token = await idToken(s.url, a);
  auth = { authorization: `Bearer ${token}` };
});

afterAll(() => closeAgentTest(s, tools, llm));

/** Waits until every source added to the draft only is indexed. */
async function draftSourcesIndexed(chatbotId = a.chatbotId) {
  for (let i = 0; ; i++) {
    const d = await getJson(s.url, draftPath(chatbotId), {}, auth);
    const own = d.body.data.draft_sources as { status: string }[];
    if (own.every((x) => x.status === "indexed")) return d.body.data;
    if (i > 2000) throw new Error(`draft sources not indexed: ${JSON.stringify(own)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a draft's knowledge sources", () => {
  it("a replay of 20 past conversations with one source changed shows exactly the answers that change; publish applies it", async () => {
    const ids = {} as Record<Topic, string>;
    for (const [topic, t] of Object.entries(TOPICS) as [Topic, (typeof TOPICS)[Topic]][]) {
      ids[topic] = await source(topic[0]!.toUpperCase() + topic.slice(1), t.snippet);
      await settled(s.url, token, a.chatbotId, ids[topic]);
    }
    // 20 real conversations, 5 on each topic, answered live by the built-in agent from the sources.
    const topics = Object.keys(TOPICS) as Topic[];
    const asked = new Map<string, Topic>();
    for (let i = 0; i < 20; i++) {
      const topic = topics[i % 4]!;
      s.clock.advance(1000);
      const r = await send(s.url, (await issueTokens(s.url, a, `src-customer-${i}`)).access_token, TOPICS[topic].q);
      expect(r.reply.documents[0]?.source_id, JSON.stringify(r.reply)).toBe(ids[topic]);
      asked.set(r.conversation_id, topic);
    }

    // The draft replaces the returns source: it leaves the live one out and adds its own (60 days).
    const put = await requestJson(s.url, "PATCH", draftPath(), auth, {
      sources: { left_out_source_ids: [ids.returns] },
    });
    expect(put.status).toBe(200);
    expect(put.body.data.left_out_source_ids).toEqual([ids.returns]);
    const draftReturns = await source(
      "Returns",
      "Returns after delivery are free within 60 days.",
      a.chatbotId,
      "agent_draft/sources",
    );
    const draft = await draftSourcesIndexed();
    expect(draft.draft_sources).toEqual([
      expect.objectContaining({ source_id: draftReturns, chatbot_id: a.chatbotId }),
    ]);

    // Live, nothing changed: the chatbot's sources and its search know nothing of the draft's.
    const listed = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/knowledge_sources`, {}, auth);
    expect(listed.body.data.sources.map((x: { source_id: string }) => x.source_id).sort()).toEqual(
      Object.values(ids).sort(),
    );
    const search = await getJson(
      s.url,
      `/v1/account/chatbots/${a.chatbotId}/knowledge/search`,
      { query: TOPICS.returns.q },
      auth,
    );
    expect(JSON.stringify(search.body)).not.toContain("60 days");
    expect(
      (await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/knowledge_sources/${draftReturns}`, {}, auth)).status,
    ).toBe(404);

    const r = await postJson(s.url, `${draftPath()}:replay`, { last_conversations: 20 }, auth);
    expect(r.status).toBe(200);
    const items = r.body.data.items as {
      conversation_id: string;
      changed: boolean;
      differences: string[];
      live: { content: string; documents: { source_id: string; source_title: string }[] };
      draft: { content: string; documents: { source_id: string; source_title: string }[] };
    }[];
    expect(items).toHaveLength(20);
    // Exactly the 5 conversations about returns change, in their answer and their cited passage's source.
    expect(items.filter((i) => i.changed).map((i) => asked.get(i.conversation_id))).toEqual(Array(5).fill("returns"));
    expect(r.body.data.changed).toBe(5);
    for (const i of items.filter((x) => x.changed)) {
      expect(i.differences).toEqual(["content", "documents"]);
      expect(i.live.content).toContain("30 days");
      expect(i.draft.content).toContain("60 days");
      expect(i.live.documents[0]!.source_id).toBe(ids.returns);
      expect(i.draft.documents[0]).toMatchObject({ source_id: draftReturns, source_title: "Returns" });
    }
    // The built-in agent makes it deterministic.
    expect((await postJson(s.url, `${draftPath()}:replay`, { last_conversations: 20 }, auth)).body.data).toEqual(
      r.body.data,
    );

    // Published: the left-out source is gone, the draft's joins the live knowledge (indexed again), customers get it.
    const published = await postJson(s.url, `${draftPath()}:publish`, {}, auth);
    expect(published.status).toBe(200);
    expect((await getJson(s.url, draftPath(), {}, auth)).status).toBe(404);
    expect((await settled(s.url, token, a.chatbotId, draftReturns)).status).toBe("indexed");
    const after = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/knowledge_sources`, {}, auth);
    const live = after.body.data.sources.map((x: { source_id: string }) => x.source_id);
    expect(live).toContain(draftReturns);
    expect(live).not.toContain(ids.returns);
    const answer = await send(s.url, (await issueTokens(s.url, a, "after-publish")).access_token, TOPICS.returns.q);
    expect(answer.reply.content).toContain("60 days");
    expect(answer.reply.documents[0].source_id).toBe(draftReturns);
  });

  it("a dropped draft removes the sources added to it only; bad source ids are refused, naming the field", async () => {
    const own = await source("Gift cards", "Gift cards never expire.", a.chatbotId, "agent_draft/sources");
    expect((await getJson(s.url, draftPath(), {}, auth)).body.data.draft_sources).toHaveLength(1);
    for (const [ids, field] of [
      [["not-a-uuid"], "left_out_source_ids[0]"],
      [["7d4a2a5e-0000-4000-8000-000000000000"], "left_out_source_ids[0]"],
    ] as const) {
      const bad = await requestJson(s.url, "PATCH", draftPath(), auth, { sources: { left_out_source_ids: ids } });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toContain(field);
    }
    expect((await requestJson(s.url, "DELETE", draftPath(), auth)).status).toBe(200);
    // A new draft has none of it.
    const fresh = await requestJson(s.url, "PATCH", draftPath(), auth, { instructions: "Fresh." });
    expect(fresh.body.data.draft_sources).toEqual([]);
    expect(JSON.stringify(fresh.body)).not.toContain(own);
    expect((await requestJson(s.url, "DELETE", draftPath(), auth)).status).toBe(200);

    // Another account cannot add a source to this chatbot's draft.
    const b = await s.account();
    const other = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const foreign = await postJson(
      s.url,
      `${draftPath()}/sources`,
      { kind: "snippets", snippets: [{ title: "x", url: "https://x.example", snippet: "y" }] },
      other,
    );
    expect(foreign.status).toBe(404);
  });
});

describe("a draft's tools", () => {
  it("the replay offers the draft's tools and shows the changed calls; publish applies them, a new tool's secret shown once", async () => {
    const bot = await s.app.accounts.createChatbot(a.email, "Tool bot", ["https://shop.example"], []);
    await s.app.accounts.updateChatbot(a.email, bot.chatbotId, {
      agent: { kind: "openai_compatible", baseUrl: llm.url, model: "m", apiKey: "" },
    });
    const toolsPath = `/v1/account/chatbots/${bot.chatbotId}/tools`;
    const made = await requestJson(s.url, "POST", toolsPath, auth, {
      name: "track_order",
      description: "Where an order is.",
      url: tools.url("/track"),
    });
    const liveId = made.body.data.tool.tool_id as string;
    const alsoLive = await requestJson(s.url, "POST", toolsPath, auth, {
      name: "old_lookup",
      description: "An old lookup.",
      url: tools.url("/old"),
    });
    expect(alsoLive.status).toBe(200);

    // The draft: track_order described anew, refund_order added, old_lookup removed.
    const put = await requestJson(s.url, "PATCH", draftPath(bot.chatbotId), auth, {
      tools: {
        tools: [
          {
            tool_id: liveId,
            name: "track_order",
            description: "Where an order is, by number.",
            url: tools.url("/track"),
          },
          {
            name: "refund_order",
            description: "Refunds an order.",
            url: tools.url("/refund"),
            requires_approval: true,
          },
        ],
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.data.tools.map((t: { name: string; change: string }) => [t.name, t.change])).toEqual([
      ["track_order", "changed"],
      ["refund_order", "added"],
    ]);
    expect(put.body.data.removed_tools.map((t: { name: string }) => t.name)).toEqual(["old_lookup"]);

    // The model calls refund_order when it is offered, else track_order.
    llm.behave((req, res) => {
      const offered = (req.body.tools ?? []).map((t) => t.function.name);
      const call = offered.includes("refund_order") ? "refund_order" : "track_order";
      scripted([
        req.body.messages.at(-1)?.role === "tool"
          ? { text: ["Done."] }
          : { toolCalls: [{ id: "t1", name: call, arguments: "{}" }] },
      ])(req, res);
    });
    const before = llm.requests.length;
    const r = await postJson(
      s.url,
      `${draftPath(bot.chatbotId)}:replay`,
      { cases: [{ question: "Refund my order", expected_tools: ["refund_order"] }] },
      auth,
    );
    expect(r.status).toBe(200);
    expect(tools.calls).toHaveLength(0);
    const [item] = r.body.data.items;
    expect(item.differences).toContain("tool_calls");
    expect(JSON.parse(item.live.tool_calls).map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([
      ["track_order", "dry_run"],
    ]);
    // A call of a tool that needs approval stops at awaiting approval, as it would live: nothing is called either.
    expect(JSON.parse(item.draft.tool_calls)[0].name).toBe("refund_order");
    expect(item.live.passes).toBe(false);
    expect(item.draft.passes).toBe(true);
    const offered = llm.requests.slice(before).map((x) => (x.body.tools ?? []).map((t) => t.function.name).sort());
    expect(offered[0]).toEqual(["handover", "old_lookup", "track_order"]);
    expect(offered.at(-1)).toEqual(["handover", "refund_order", "track_order"]);

    // Published: the live tools are the draft's; the new one's secret is in this answer only.
    const published = await postJson(s.url, `${draftPath(bot.chatbotId)}:publish`, {}, auth);
    expect(published.status).toBe(200);
    const created = published.body.data.created_tools;
    expect(created).toHaveLength(1);
    expect(created[0].tool.name).toBe("refund_order");
    expect(created[0].secret).toMatch(/^whsec_/);
    const listed = (await getJson(s.url, toolsPath, {}, auth)).body.data.tools as {
      name: string;
      tool_id: string;
      description: string;
    }[];
    expect(listed.map((t) => t.name).sort()).toEqual(["refund_order", "track_order"]);
    expect(listed.find((t) => t.name === "track_order")).toMatchObject({
      tool_id: liveId,
      description: "Where an order is, by number.",
    });
    expect(JSON.stringify(listed)).not.toContain("whsec_");
  });

  it("refuses a bad tool list naming the field, and changes nothing", async () => {
    const base = { name: "t", description: "d", url: tools.url("/x") };
    await requestJson(s.url, "PATCH", draftPath(), auth, { instructions: "Keep." });
    for (const [list, field] of [
      [[{ ...base, parameters: '{"type":"string"}' }], "tools.tools[0].parameters"],
      [[base, base], "tools.tools[1].name"],
      [[{ ...base, tool_id: "7d4a2a5e-0000-4000-8000-000000000000" }], "tools.tools[0].tool_id"],
      [[{ ...base, name: "handover" }], "tools.tools[0].name"],
      [[{ ...base, url: "ftp://x.example/" }], "tools.tools[0].url"],
    ] as const) {
      const r = await requestJson(s.url, "PATCH", draftPath(), auth, {
        instructions: "Changed?",
        tools: { tools: list },
      });
      expect(r.status, JSON.stringify(list)).toBe(400);
      expect(r.body.message).toContain(field);
    }
    expect((await getJson(s.url, draftPath(), {}, auth)).body.data.instructions).toBe("Keep.");
    await requestJson(s.url, "DELETE", draftPath(), auth);
  });
});
