import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import type { Agent, AgentEvent, AgentTurn } from "./agent.js";

const FALLBACK =
  "Thanks for your message. I don't have an answer to that yet; a member of our team can follow up here.";
const STOP = new Set([
  "the",
  "a",
  "an",
  "and",
  "or",
  "of",
  "to",
  "in",
  "is",
  "are",
  "i",
  "you",
  "my",
  "your",
  "it",
  "for",
  "on",
  "with",
  "do",
  "does",
  "how",
  "what",
  "can",
  "me",
  "we",
]);
const GREETING = /^\s*(hi|hello|hey|hallo|good (morning|afternoon|evening))\b[\s!.,]*$/i;

function words(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !STOP.has(w));
}

/** The snippets sharing words with the question, most shared words first (ties keep their configured order). */
export function rankSnippets(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet[] {
  const q = new Set(words(question));
  return knowledge
    .map((k, i) => ({ k, i, score: new Set(words(`${k.title} ${k.snippet}`).filter((w) => q.has(w))).size }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.k);
}

/** The snippet sharing the most words with the question, if any shares one. */
export function bestSnippet(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet | undefined {
  return rankSnippets(question, knowledge)[0];
}

function topics(knowledge: KnowledgeSnippet[]): string {
  const titles = knowledge.slice(0, 5).map((k) => k.title.toLowerCase());
  return titles.length > 1 ? `${titles.slice(0, -1).join(", ")} or ${titles.at(-1)}` : (titles[0] ?? "");
}

/** What the built-in agent says to a question: the best snippet, a greeting, or a fallback that names what it knows. */
export function offlineAnswer(
  chatbot: ChatbotRecord,
  question: string,
): { content: string; documents: KnowledgeSnippet[] } {
  const hit = bestSnippet(question, chatbot.knowledge);
  // The source travels as a cited document (the frame shows it as a link), not repeated in the text.
  if (hit) return { content: hit.snippet, documents: [hit] };
  const known = topics(chatbot.knowledge);
  if (GREETING.test(question))
    return {
      content: `Hello! I'm ${chatbot.name}.${known ? ` Ask me about ${known}.` : " How can I help?"}`,
      documents: [],
    };
  return { content: known ? `${FALLBACK} I can already help with ${known}.` : FALLBACK, documents: [] };
}

/** The built-in agent: deterministic, offline, answers from the chatbot's snippets and cites them. */
export class OfflineAgent implements Agent {
  async *reply(chatbot: ChatbotRecord, history: AgentTurn[], signal: AbortSignal): AsyncIterable<AgentEvent> {
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    const { content, documents } = offlineAnswer(chatbot, question);
    for (const piece of content.match(/\S+\s*/g) ?? []) {
      if (signal.aborted) return;
      yield { type: "delta", text: piece };
    }
    yield { type: "done", content, documents, toolCalls: "" };
  }
}
