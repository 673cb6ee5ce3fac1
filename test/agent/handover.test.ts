import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LlmStandIn, scripted, startLlmStandIn } from "../frame/llm-stand-in.js";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Handover rules that work without a model, and what follows a handover; the owner's instructions and agent name;
// the daily model budget; a chatbot set to built_in keeps the built-in agent whatever AIAGENT_LLM_* says. On SQLite,
// and on PostgreSQL in the api-postgres project.

const KNOWLEDGE = [
  { title: "Shipping", url: "https://shop.example/shipping", snippet: "Orders ship within 2 business days." },
  { title: "Returns", url: "https://shop.example/returns", snippet: "Returns are free within 30 days." },
];

describe("without a model", () => {
  let s: TestServer;
  let a: TestAccount;
  let auth: Record<string, string>;
  let n = 0;
  const customer = async () => (await issueTokens(s.url, a, `person-${++n}`)).access_token;
  const settings = (body: object) =>
    requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/agent_settings`, auth, body);

  beforeAll(async () => {
    s = await startServer({ overrides: { dispatch: false } });
    a = await s.account({ knowledge: KNOWLEDGE });
    auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
  });
  afterAll(() => s?.close(true));

  it("a customer asking for a person reaches the team's unassigned view with the reason; the agent then stays quiet until released", async () => {
    const at = await customer();
    const r = await send(s.url, at, "I want to talk to a person please");
    expect(r.reply.content).toBe(
      "I'm passing you to a person from our team. They will answer here as soon as possible.",
    );
    const unassigned = await contacts(s.url, auth.authorization!.slice(7), a.email, { view: "unassigned" });
    const contact = unassigned.body.data.data.contacts.find(
      (c: { latest_conversation_id: string }) => c.latest_conversation_id === r.conversation_id,
    );
    expect(contact).toBeDefined();
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: r.conversation_id }, auth);
    expect(notes.body.data.notes).toEqual([
      expect.objectContaining({ content: "Handed over to the team by the AI agent: the customer asked for a person." }),
    ]);
    // The team's inbox hears of it: the note is in the account's event log (watch_account and webhooks read it).
    const events = await getJson(s.url, "/v1/account/events", { types: "note.created" }, auth);
    expect(events.body.data.events.map((e: any) => e.data.conversation_id)).toContain(r.conversation_id);
    // The conversation's timeline says so, with the reason.
    const timeline = await getJson(s.url, "/list_conversation_activity", { conversation_id: r.conversation_id }, auth);
    expect(timeline.body.data.activities.map((l: Record<string, string>) => [l.kind, l.actor_name, l.detail])).toEqual([
      ["handed_over", "AI agent", "the customer asked for a person"],
    ]);

    // Waiting for the team: the agent answers nothing more.
    const waiting = await send(s.url, at, "Where is my parcel?", r.conversation_id);
    expect(waiting.reply).toBeUndefined();

    // Released, the agent answers again.
    const released = await postJson(s.url, "/release_conversation", { conversation_id: r.conversation_id }, auth);
    expect(released.status).toBe(200);
    const again = await send(s.url, at, "How fast do you ship?", r.conversation_id);
    expect(again.reply.content).toContain("Orders ship within 2 business days.");
  });

  it.each([
    ["de", "Ich möchte mit einem Menschen sprechen", "Ich gebe Sie an eine Person aus unserem Team weiter."],
    ["fr", "Je voudrais parler à un humain", "Je vous passe une personne de notre équipe."],
    ["es", "Quiero hablar con una persona", "Le paso con una persona de nuestro equipo."],
    ["en", "Can I speak with a real human?", "I'm passing you to a person from our team."],
  ])("asked in %s, the customer is answered in that language", async (_lang, question, answer) => {
    const r = await send(s.url, await customer(), question);
    expect(r.reply.content).toContain(answer);
  });

  it("a question about people that is not a request for one is answered", async () => {
    const r = await send(s.url, await customer(), "How do returns work?");
    expect(r.reply.content).toContain("Returns are free");
  });

  it("words the client lists hand over", async () => {
    expect((await settings({ handover_phrases: { phrases: ["Cancel my contract"] } })).status).toBe(200);
    const r = await send(s.url, await customer(), "please cancel my contract today");
    expect(r.reply.content).toContain("person from our team");
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: r.conversation_id }, auth);
    expect(notes.body.data.notes[0].content).toContain('contains "Cancel my contract"');
    await settings({ handover_phrases: { phrases: [] } });
  });

  it("after N answers in a row that were I don't know, the conversation is handed over", async () => {
    expect((await settings({ dont_know_limit: 2 })).body.data.dont_know_limit).toBe(2);
    const at = await customer();
    const first = await send(s.url, at, "What is the capital of Peru?");
    expect(first.reply.content).toContain("I don't know the answer");
    expect(first.reply.content).not.toContain("person from our team");
    const second = await send(s.url, at, "And the meaning of life?", first.conversation_id);
    expect(second.reply.content).toContain("I'm passing you to a person from our team.");
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: first.conversation_id }, auth);
    expect(notes.body.data.notes[0].content).toContain(`2 answers in a row were "I don't know"`);
    expect((await send(s.url, at, "Hello?", first.conversation_id)).reply).toBeUndefined();
    await settings({ dont_know_limit: 0 });
  });

  it("outside office hours the customer is told when the team is back", async () => {
    const patched = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}`, auth, {
      appearance: { office_hours: { time_zone: "UTC", intervals: [{ weekday: 1, open: "09:00", close: "17:00" }] } },
    });
    expect(patched.status).toBe(200);
    // Saturday noon, UTC: the team is back on Monday at 09:00.
    const drift = Date.now() - s.clock.now();
    s.clock.freezeAt(Date.parse("2026-11-28T12:00:00.000Z"));
    try {
      const r = await send(s.url, await customer(), "I need to speak to a human");
      expect(r.reply.content).toContain("The team is away right now");
      expect(r.reply.content).toMatch(/Monday.*09:00/);
    } finally {
      s.clock.resume();
      s.clock.advance(Date.now() - s.clock.now() - drift);
      await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}`, auth, {
        appearance: { clear_office_hours: true },
      });
    }
  });

  it("settings refuse bad values naming the field, and another account's chatbot is not found", async () => {
    for (const [body, field] of [
      [{ dont_know_limit: 21 }, "dont_know_limit"],
      [{ instructions: "x".repeat(4001) }, "instructions"],
      [{ handover_phrases: { phrases: [" "] } }, "handover_phrases"],
    ] as const) {
      const r = await settings(body);
      expect(r.status).toBe(400);
      expect(r.body.message).toContain(field);
    }
    const b = await s.account();
    const bAuth = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const r = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/agent_settings`, bAuth, {
      instructions: "Be rude.",
    });
    expect(r.status).toBe(404);
    const mine = await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/agent_settings`, {}, auth);
    expect(mine.body.data.instructions).toBe("");
  });

  it("the built-in agent greets with the appearance's agent name", async () => {
    const bare = await s.account();
    const bareAuth = { authorization: `Bearer ${await idToken(s.url, bare)}` };
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${bare.chatbotId}`, bareAuth, {
      appearance: { agent_name: "Ava" },
    });
    const t = await issueTokens(s.url, bare, "greeted");
    const r = await send(s.url, t.access_token, "Hello");
    expect(r.reply.content).toMatch(/^Hello! I'm Ava\./);
  });
});

describe("with a model", () => {
  let llm: LlmStandIn;
  let s: TestServer;
  let a: TestAccount;
  let auth: Record<string, string>;
  let n = 0;
  const customer = async () => (await issueTokens(s.url, a, `model-${++n}`)).access_token;

  beforeAll(async () => {
    llm = await startLlmStandIn();
    s = await startServer({
      env: { AIAGENT_LLM_BASE_URL: llm.url, AIAGENT_LLM_MODEL: "stand-in-model" },
      overrides: { dispatch: false },
    });
    a = await s.account({ knowledge: KNOWLEDGE });
    auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
  });
  afterAll(async () => {
    await s?.close(true);
    await llm?.close();
  });

  it("the model is told the owner's instructions and the appearance's agent name", async () => {
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}`, auth, {
      appearance: { agent_name: "Ava" },
    });
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/agent_settings`, auth, {
      instructions: "Always be cheerful. Never talk about competitors.",
    });
    llm.behave(scripted([{ text: ["Happy to help!"] }]));
    const r = await send(s.url, await customer(), "Hi there");
    expect(r.reply.content).toBe("Happy to help!");
    const system = llm.requests.at(-1)!.body.messages[0]!.content!;
    expect(system).toContain('You are "Ava"');
    expect(system).not.toContain('You are "Test bot"');
    expect(system).toContain("Never talk about competitors.");
  });

  it("a customer asking for a person is handed over without calling the model", async () => {
    const before = llm.requests.length;
    const r = await send(s.url, await customer(), "I want to speak to a human");
    expect(r.reply.content).toContain("person from our team");
    expect(llm.requests.length).toBe(before);
  });

  it("once the day's token budget is used, conversations hand over instead of calling the model", async () => {
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/agent_settings`, auth, {
      daily_token_budget: 100,
    });
    const used = (await getJson(s.url, `/v1/account/chatbots/${a.chatbotId}/agent_settings`, {}, auth)).body.data
      .tokens_used_today;
    llm.behave(scripted([{ text: ["Orders ship within 2 business days [1]."], tokens: Math.max(1, 100 - used) }]));
    const at = await customer();
    const first = await send(s.url, at, "How fast do you ship?");
    expect(first.reply.content).toContain("2 business days");
    const before = llm.requests.length;
    const second = await send(s.url, at, "And returns?", first.conversation_id);
    expect(llm.requests.length).toBe(before);
    expect(second.reply.content).toContain("person from our team");
    const notes = await getJson(s.url, "/list_conversation_notes", { conversation_id: first.conversation_id }, auth);
    expect(notes.body.data.notes[0].content).toContain("daily model budget is used up");
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}/agent_settings`, auth, {
      daily_token_budget: 1_000_000_000,
    });
  });

  it("a chatbot set to built_in is answered by the built-in agent although AIAGENT_LLM_BASE_URL is set", async () => {
    const b = await s.account({ knowledge: KNOWLEDGE });
    const bAuth = { authorization: `Bearer ${await idToken(s.url, b)}` };
    const set = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${b.chatbotId}`, bAuth, {
      agent: { kind: "built_in" },
    });
    expect(set.status).toBe(200);
    expect(set.body.data.agent).toMatchObject({ kind: "built_in", follows_service_default: false });
    llm.behave(scripted([{ text: ["From the model."] }]));
    const before = llm.requests.length;
    const t = await issueTokens(s.url, b, "builtin-user");
    const r = await send(s.url, t.access_token, "How fast do you ship?");
    expect(r.reply.content).toBe("Orders ship within 2 business days.");
    expect(llm.requests.length).toBe(before);

    // A chatbot that never chose keeps the service's default agent, the model.
    const c = await s.account({ knowledge: KNOWLEDGE });
    const cAuth = { authorization: `Bearer ${await idToken(s.url, c)}` };
    const shown = await getJson(s.url, `/v1/account/chatbots/${c.chatbotId}`, {}, cAuth);
    expect(shown.body.data.agent).toMatchObject({ kind: "built_in", follows_service_default: true });
    const u = await issueTokens(s.url, c, "default-user");
    expect((await send(s.url, u.access_token, "How fast do you ship?")).reply.content).toBe("From the model.");
  });
});
