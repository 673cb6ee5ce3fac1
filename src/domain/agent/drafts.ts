import type { KnowledgeSnippet } from "../account/repository.js";

/** A chatbot's agent as it would be once published: what a replay compares with the live configuration. */
export interface AgentDraftRecord {
  chatbotId: string;
  accountId: string;
  instructions: string;
  /** The knowledge list in the draft (the chatbot's `knowledge`). */
  knowledge: KnowledgeSnippet[];
  /** The model, for a chatbot with an OpenAI-compatible endpoint ("" for the built-in agent). */
  model: string;
  updatedAt: number;
}

/** Storage of drafts, and the conversations a replay reads. */
export interface AgentDraftRepository {
  draft(chatbotId: string): Promise<AgentDraftRecord | undefined>;
  putDraft(d: AgentDraftRecord): Promise<void>;
  deleteDraft(chatbotId: string): Promise<boolean>;
  /** The chatbot's latest conversations that have messages, newest first (ids). */
  latestConversations(chatbotId: string, limit: number): Promise<string[]>;
}
