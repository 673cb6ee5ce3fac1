import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import type { Agent, AgentEvent, AgentTurn } from "./agent.js";

const FALLBACK = "Thanks for your message. I don't have an answer to that yet; a member of our team can follow up here.";
const STOP = new Set(["the", "a", "an", "and", "or", "of", "to", "in", "is", "are", "i", "you", "my", "your", "it", "for", "on", "with", "do", "does", "how", "what", "can", "me", "we"]);

function words(s: string): string[] {
  return s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 1 && !STOP.has(w));
}

/** The snippet sharing the most words with the question, if any shares one. */
export function bestSnippet(question: string, knowledge: KnowledgeSnippet[]): KnowledgeSnippet | undefined {
  const q = new Set(words(question));
  let best: KnowledgeSnippet | undefined;
  let bestScore = 0;
  for (const k of knowledge) {
    const score = new Set(words(`${k.title} ${k.snippet}`).filter((w) => q.has(w))).size;
    if (score > bestScore) [best, bestScore] = [k, score];
  }
  return best;
}

/** The built-in agent: deterministic, offline, answers from the chatbot's snippets and cites them. */
export class OfflineAgent implements Agent {
  async *reply(chatbot: ChatbotRecord, history: AgentTurn[], signal: AbortSignal): AsyncIterable<AgentEvent> {
    const question = [...history].reverse().find((t) => t.role === "user")?.content ?? "";
    const hit = bestSnippet(question, chatbot.knowledge);
    const content = hit ? `${hit.snippet} (Source: ${hit.title})` : FALLBACK;
    for (const piece of content.match(/\S+\s*/g) ?? []) {
      if (signal.aborted) return;
      yield { type: "delta", text: piece };
    }
    yield { type: "done", content, documents: hit ? [hit] : [], toolCalls: "" };
  }
}
