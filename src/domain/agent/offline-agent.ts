import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import { type Agent, type AgentEvent, type AgentTurn, agentNameOf } from "./agent.js";
import { rankSnippets } from "./matching.js";

const FALLBACK =
  "Thanks for your message. I don't have an answer to that yet; a member of our team can follow up here.";
/** What a chatbot made without knowledge says: plainly that it has none, and how its owner adds some. */
export const NO_KNOWLEDGE =
  "I have no knowledge to answer from yet, so a member of our team will follow up here. " +
  "(For the chatbot's owner: give it knowledge with the aiagent command's --knowledge option, " +
  'a JSON file listing {"title", "url", "snippet"} entries.)';
const GREETING = /^\s*(hi|hello|hey|hallo|good (morning|afternoon|evening))\b[\s!.,]*$/i;

function topics(knowledge: KnowledgeSnippet[]): string {
  const titles = knowledge.slice(0, 5).map((k) => k.title.toLowerCase());
  return titles.length > 1 ? `${titles.slice(0, -1).join(", ")} or ${titles.at(-1)}` : (titles[0] ?? "");
}

/** What the built-in agent says to a question: the best snippet, a greeting, or a fallback that names what it knows. */
export function offlineAnswer(
  chatbot: ChatbotRecord,
  question: string,
): { content: string; documents: KnowledgeSnippet[] } {
  if (chatbot.knowledge.length === 0)
    return {
      content: GREETING.test(question) ? `Hello! I'm ${agentNameOf(chatbot)}. ${NO_KNOWLEDGE}` : NO_KNOWLEDGE,
      documents: [],
    };
  const hit = rankSnippets(question, chatbot.knowledge)[0];
  // The source travels as a cited document (the frame shows it as a link), not repeated in the text.
  if (hit) return { content: hit.snippet, documents: [hit] };
  const known = topics(chatbot.knowledge);
  if (GREETING.test(question))
    return { content: `Hello! I'm ${agentNameOf(chatbot)}. Ask me about ${known}.`, documents: [] };
  return { content: `${FALLBACK} I can already help with ${known}.`, documents: [] };
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
