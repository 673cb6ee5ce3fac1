import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_KNOWLEDGE, DEMO_QUESTIONS } from "../../src/bootstrap.js";
import { manualPages, readPage } from "../helpers/docs.js";
import { issueTokens, send } from "../helpers/flows.js";
import { startServer, type TestServer } from "../helpers/server.js";

// The built-in agent through the real send_message route: the questions the demo page suggests and the README's own
// examples get an answer from the knowledge (cited), and a chatbot without knowledge says so and how to add some.
const MANUAL = manualPages().map(readPage).join("\n");
/** The `content` of every send_message example in the manual (a command continued with `\` read as one line). */
const readmeQuestions = [
  ...new Set(
    MANUAL.replaceAll("\\\n", " ")
      .split("\n")
      .filter((l) => l.includes("/ai_agent/send_message"))
      .flatMap((l) => [...l.matchAll(/"content":"([^"]+)"/g)].map((m) => m[1]!)),
  ),
];

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close(true));

async function ask(knowledge: typeof DEMO_KNOWLEDGE, questions: string[]) {
  const a = await s.account({ knowledge });
  const { access_token } = await issueTokens(s.url, a, "customer-42");
  const replies: { content: string; documents: { title: string; url: string }[] }[] = [];
  let conversation: string | undefined;
  for (const q of questions) {
    const r = await send(s.url, access_token, q, conversation);
    conversation = r.conversation_id;
    replies.push(r.reply);
  }
  return replies;
}

describe("the built-in agent", () => {
  it("answers the demo page's and the README's example questions from the demo knowledge, citing the snippet", async () => {
    expect(readmeQuestions).toContain("Where is my parcel?");
    const questions = [...DEMO_QUESTIONS, ...readmeQuestions];
    const replies = await ask(DEMO_KNOWLEDGE, questions);
    const cited = Object.fromEntries(questions.map((q, i) => [q, replies[i]!.documents.map((d) => d.title)]));
    expect(cited["Where is my parcel?"]).toEqual(["Track your parcel"]);
    expect(cited["How long does shipping take?"]).toEqual(["Shipping"]);
    expect(cited["Can I return an item?"]).toEqual(["Returns"]);
    expect(cited["And returns?"]).toEqual(["Returns"]);
    for (const [i, q] of questions.entries()) {
      const snippet = DEMO_KNOWLEDGE.find((k) => k.title === cited[q]![0]);
      expect(replies[i]!.content, q).toBe(snippet?.snippet);
    }
  });

  it("answers from examples/knowledge.json (the README's walkthrough file) as from the demo's", () => {
    expect(JSON.parse(readFileSync("examples/knowledge.json", "utf8"))).toEqual(DEMO_KNOWLEDGE);
  });

  it("says plainly it does not know when a question matches nothing it knows, never the nearest snippet", async () => {
    const [reply] = await ask(DEMO_KNOWLEDGE, ["Do you sell gift vouchers?"]);
    expect(reply!.documents).toEqual([]);
    expect(reply!.content).toBe("I'm sorry, I don't know the answer to that. A member of our team can follow up here.");
  });

  it("greets with the topics it knows, as their titles are written (not 'Ask me about track your parcel')", async () => {
    const [reply] = await ask(DEMO_KNOWLEDGE, ["Hello"]);
    expect(reply!.content).toBe(
      "Hello! I'm Test bot. How can I help? I can answer questions about “Track your parcel”, “Shipping”, “Returns” and “Opening hours”.",
    );
    expect(reply!.content).not.toContain("about track your parcel");
  });

  it("writes its own sentences in the customer's language: German, French, Spanish", async () => {
    const replies = await ask(DEMO_KNOWLEDGE, [
      "Verkaufen Sie auch Gutscheine für Geburtstage?",
      "Est-ce que vous vendez des bons cadeaux?",
      "¿Venden ustedes tarjetas regalo?",
      "Hallo",
      "Bonjour",
      "Hola",
    ]);
    expect(replies.map((r) => r.content)).toEqual([
      "Das weiß ich leider nicht. Eine Person aus unserem Team kann sich hier darum kümmern.",
      "Désolé, je ne connais pas la réponse. Un membre de notre équipe peut vous répondre ici.",
      "Lo siento, no sé la respuesta. Una persona de nuestro equipo puede ayudarte aquí.",
      "Hallo! Ich bin Test bot. Wie kann ich helfen? Ich beantworte Fragen zu “Track your parcel”, “Shipping”, “Returns” und “Opening hours”.",
      "Bonjour ! Je suis Test bot. Comment puis-je vous aider ? Je peux répondre aux questions sur “Track your parcel”, “Shipping”, “Returns” et “Opening hours”.",
      "¡Hola! Soy Test bot. ¿En qué puedo ayudarte? Puedo responder preguntas sobre “Track your parcel”, “Shipping”, “Returns” y “Opening hours”.",
    ]);
    for (const r of replies) expect(r.documents).toEqual([]);
  });

  it("without knowledge, says plainly it has none yet and how its owner adds some", async () => {
    const replies = await ask([], ["Where is my parcel?", "Hello"]);
    for (const r of replies) {
      expect(r.documents).toEqual([]);
      expect(r.content).toContain("I have no knowledge to answer from yet");
      expect(r.content).toContain("--knowledge");
      expect(r.content).not.toContain("I can answer questions about");
    }
    expect(replies[1]!.content).toMatch(/^Hello! I'm Test bot\./);
  });

  it("reads the chatbot's knowledge sources once per reply, whether it answers, does not know, or has no knowledge", async () => {
    // Counted where the file is read (the reply's reads go with the customer's message's unit of work, whose
    // repositories are not the store's own): every run of the statement that lists a chatbot's sources.
    const Statement = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1"));
    const all = Statement.all;
    const read: string[] = [];
    Statement.all = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.includes("FROM knowledge_sources WHERE chatbot_id = ?")) read.push(args[0] as string);
      return all.apply(this, args);
    };
    try {
      for (const [list, question] of [
        [DEMO_KNOWLEDGE, "Where is my parcel?"],
        [DEMO_KNOWLEDGE, "Do you sell gift vouchers?"],
        [[], "Where is my parcel?"],
      ] as const) {
        const a = await s.account({ knowledge: [...list] });
        const { access_token } = await issueTokens(s.url, a, "customer-42");
        read.length = 0;
        await send(s.url, access_token, question);
        expect(read, question).toEqual([a.chatbotId]);
      }
    } finally {
      Statement.all = all;
    }
  });
});
