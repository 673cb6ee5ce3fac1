import { createHash } from "node:crypto";
import type { KnowledgeSnippet } from "../account/repository.js";

/** A tool as a draft has it: a live tool it keeps or changes (its toolId), or one it adds (toolId ""). No secret. */
export interface DraftToolRecord {
  toolId: string;
  name: string;
  description: string;
  /** JSON Schema of the arguments, as JSON text. */
  parameters: string;
  url: string;
  method: "POST" | "GET";
  timeoutMs: number;
  requiresApproval: boolean;
}

/** A chatbot's agent as it would be once published: what a replay compares with the live configuration. */
export interface AgentDraftRecord {
  chatbotId: string;
  accountId: string;
  instructions: string;
  /** The knowledge list in the draft (the chatbot's `knowledge`). */
  knowledge: KnowledgeSnippet[];
  /** The model, for a chatbot with an OpenAI-compatible endpoint ("" for the built-in agent). */
  model: string;
  /**
   * The draft's tools, as a whole: published, the live tools are these (absent: a draft made before drafts held
   * tools, which keeps the live ones).
   */
  tools?: DraftToolRecord[];
  /** The chatbot's knowledge sources the draft leaves out (removed when it is published). */
  leftOutSources?: string[];
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

/**
 * The knowledge key of a chatbot's draft: the sources added to the draft only are stored and indexed under it, as
 * under a chatbot of their own that no customer's search reads. A uuid made from the chatbot's id (the same on every
 * instance), never one of a chatbot.
 */
export function draftKnowledgeKey(chatbotId: string): string {
  const h = createHash("sha256").update(`agent-draft-knowledge\n${chatbotId}`).digest("hex");
  // A version-8 uuid (made by a hash of the service's own), variant 10.
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
