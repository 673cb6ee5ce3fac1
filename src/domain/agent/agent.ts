import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";

/** One turn of context given to the agent. */
export interface AgentTurn {
  role: "user" | "assistant" | "operator";
  content: string;
}

/** What the agent produces: pieces of text as they come, then the whole reply. */
export type AgentEvent =
  | { type: "delta"; text: string }
  | { type: "done"; content: string; documents: KnowledgeSnippet[]; toolCalls: string };

/** The AI agent behind the frame; implementations are interchangeable. */
export interface Agent {
  reply(chatbot: ChatbotRecord, history: AgentTurn[], signal: AbortSignal): AsyncIterable<AgentEvent>;
}

/** The agent could not answer; the user's message is kept. */
export class AgentUnavailableError extends Error {
  override readonly name = "AgentUnavailableError";
}
