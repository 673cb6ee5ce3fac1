import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import type { KnowledgeView, ReplySources } from "../knowledge/knowledge-service.js";
import type { KnowledgeRepository } from "../knowledge/source.js";
import type { AgentRepository, AgentSettingsRecord, HandoverRecord, ToolRecord } from "./tools.js";

/** One turn of context given to the agent. */
export interface AgentTurn {
  role: "user" | "assistant" | "operator";
  content: string;
  /** An assistant turn's record of the tool calls it made (the message's `tool_calls` text; "" or absent: none). */
  toolCalls?: string;
}

/** What the agent produces: pieces of text as they come, then the whole reply. */
export type AgentEvent =
  | { type: "delta"; text: string }
  /** Tool calls are running (the frame shows a short "looking that up" line; never their arguments or results). */
  | { type: "activity"; activity: "looking_up" }
  | {
      type: "done";
      content: string;
      documents: KnowledgeSnippet[];
      toolCalls: string;
      /** The model tokens the reply used, as the model reported them (absent: none, or not reported). */
      tokens?: number;
      /** Set when the conversation is to be handed over to the team: why, for the team's note. */
      handover?: string;
    };

/** A tool the model may call: its name, what it does, and its arguments as JSON Schema. */
export interface AgentTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** How one tool call ended. */
export type ToolCallStatus =
  | "succeeded"
  | "invalid_arguments"
  | "timeout"
  | "failed"
  | "too_large"
  | "refused_address"
  | "unknown_tool"
  | "awaiting_approval"
  /** A person of the team refused the call: it was not made. */
  | "refused"
  /** A replay: the call was not made (the record says what would have been called). */
  | "dry_run"
  | "not_run";

/** A call the model asked for. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text, maybe not valid). */
  arguments: string;
}

/** What came of a call: its status, what the model is told, and the short excerpt recorded on the message. */
export interface ToolCallOutcome {
  status: ToolCallStatus;
  /** Told to the model as the tool message's content. */
  result: string;
  durationMs: number;
  /** The call stops the loop: the conversation goes to the team (handover) or waits for a person's approval. */
  stop?: { handover?: string; approval?: boolean };
  /**
   * Passages the call gave the model (search_knowledge), each with the marker the model cites it by ("[K1]"): the
   * reply's documents are those it cites (all of them when it cites none by marker).
   */
  passages?: { marker: string; document: CitedDocument }[];
}

/** One entry of a message's `tool_calls` JSON array. */
export interface ToolCallRecord {
  id: string;
  name: string;
  arguments: string;
  status: ToolCallStatus;
  /** The start of what the model was told (at most RESULT_EXCERPT characters). */
  result: string;
  duration_ms: number;
}

/** Characters of a tool's result kept in the message's record. */
export const RESULT_EXCERPT = 500;

/** What a reply may use beyond the chatbot's settings: its tools, how to run them, its owner's instructions. */
export interface AgentContext {
  tools: AgentTool[];
  runTool(call: ToolCallRequest, signal: AbortSignal): Promise<ToolCallOutcome>;
  /** The owner's instructions, for the system prompt ("" when none). */
  instructions: string;
  /** Model calls one reply may make at most (each round of tool calls is one more). */
  maxSteps: number;
  /** Instant (epoch ms) after which no further model call or tool call starts. */
  deadline: number;
  now(): number;
  /** The chatbot's knowledge sources as the reply read them at its start: the built-in agent searches with these. */
  sources?: ReplySources;
}

/** Whom a reply is for, as the service verified it (never what a model or a customer says). */
export interface ReplyScope {
  accountId: string;
  conversationId: string;
  /** The customer's user_id, from the verified access token. */
  userId: string;
  /**
   * Set when a person decided on a call that waited for approval: the history ends with the reply that recorded it,
   * and this reply carries on from it (the call run when approved, the model told when refused).
   */
  decision?: { callId: string; approved: boolean };
  /**
   * Set for a replay: nothing is stored or sent to anyone, no tool is called (each call is recorded as dry_run), the
   * conversation's handover and the daily budget are not looked at, and these instructions are the owner's.
   */
  replay?: {
    instructions: string;
    /** The draft's tools (absent: the chatbot's live ones). */
    tools?: ToolRecord[];
    /** The draft's knowledge sources (absent: the chatbot's live ones). */
    knowledge?: KnowledgeView;
  };
  /** What the reply begins by reading, read ahead (Agent.prepare): it reads none of it again. */
  prepared?: Promise<PreparedReply>;
}

/** Where a reply's first reads are made ahead of it: the unit of work that stores the customer's message. */
export interface AgentReads {
  agents: Pick<AgentRepository, "settings" | "tools" | "handover">;
  knowledge: Pick<KnowledgeRepository, "listSources">;
}

/** What a reply begins by reading: the chatbot's agent settings and tools, the handover, the knowledge sources. */
export type PreparedReply = [
  settings: AgentSettingsRecord | undefined,
  tools: ToolRecord[],
  handover: HandoverRecord | undefined,
  sources: ReplySources | undefined,
];

/** The AI agent behind the frame; implementations are interchangeable. */
export interface Agent {
  reply(
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    scope?: ReplyScope,
    context?: AgentContext,
  ): AsyncIterable<AgentEvent>;
  /**
   * Starts the reads a reply to the conversation begins with on `reads`, the unit of work that stores the customer's
   * message, so that a back end sends them with its commit (they see what committed before the message); the reply
   * given them as ReplyScope.prepared makes none of them itself. Absent: the reply reads them itself.
   */
  prepare?(reads: AgentReads, chatbotId: string, conversationId: string): Promise<PreparedReply>;
}

/** The agent could not answer; the user's message is kept. */
export class AgentUnavailableError extends Error {
  override readonly name = "AgentUnavailableError";
}

/** The name the agent goes by: its appearance's agent name, else the chatbot's. */
export function agentNameOf(chatbot: Pick<ChatbotRecord, "name" | "appearance">): string {
  return chatbot.appearance?.agentName?.trim() || chatbot.name;
}

/** A cited document: the documented title, url and snippet, and beside them where the passage came from. */
export interface CitedDocument extends KnowledgeSnippet {
  sourceId?: string;
  sourceTitle?: string;
  anchorUrl?: string;
  headingPath?: string;
  excerpt?: string;
  score?: number;
  knowledgeVersion?: number;
}

/**
 * A message's `tool_calls` as its customer reads it (the frame's token: message lists, watch streams, send answers):
 * the same JSON array, each call reduced to its id, name and status; never the arguments the model gave or what the
 * tool answered, which are the team's to read. A record that is not such an array reads as "" (no calls).
 */
export function customerToolCalls(toolCalls: string): string {
  if (!toolCalls) return "";
  let list: unknown;
  try {
    list = JSON.parse(toolCalls);
  } catch {
    return "";
  }
  if (!Array.isArray(list)) return "";
  const calls = list.flatMap((c: { id?: unknown; name?: unknown; status?: unknown; function?: { name?: unknown } }) => {
    // Older records hold OpenAI's own shape ({id, function: {name, arguments}}): calls that were never run.
    const name = typeof c?.name === "string" ? c.name : c?.function?.name;
    if (typeof c?.id !== "string" || typeof name !== "string") return [];
    return [{ id: c.id, name, status: typeof c.status === "string" ? c.status : "not_run" }];
  });
  return calls.length > 0 ? JSON.stringify(calls) : "";
}
