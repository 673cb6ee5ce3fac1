import type { ToolApprovalRecord } from "../domain/agent/approvals.js";
import type { AgentDraftRecord } from "../domain/agent/drafts.js";
import type { AgentSettingsRecord, HandoverRecord, ToolRecord } from "../domain/agent/tools.js";
import { type Big, type Flag, isSet } from "./row-values.js";

// The rows of the agent tables, the same on both back ends but for the conversions in row-values.ts.

/** A row of `agent_tools`. */
export interface ToolRow {
  tool_id: string;
  account_id: string;
  chatbot_id: string;
  name: string;
  description: string;
  parameters: string;
  url: string;
  method: string;
  timeout_ms: Big;
  requires_approval: boolean | number;
  secret_sealed: string;
  created_at: Big;
}

export const TOOL_COLUMNS =
  "tool_id, account_id, chatbot_id, name, description, parameters, url, method, timeout_ms, requires_approval, " +
  "secret_sealed, created_at";

export const toTool = (r: ToolRow): ToolRecord => ({
  toolId: r.tool_id,
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  name: r.name,
  description: r.description,
  parameters: r.parameters,
  url: r.url,
  method: r.method === "GET" ? "GET" : "POST",
  timeoutMs: Number(r.timeout_ms),
  requiresApproval: isSet(r.requires_approval),
  secretSealed: r.secret_sealed,
  createdAt: Number(r.created_at),
});

/** A tool's values in the column order of TOOL_COLUMNS. */
export const toolValues = (t: ToolRecord, flag: Flag) => [
  t.toolId,
  t.accountId,
  t.chatbotId,
  t.name,
  t.description,
  t.parameters,
  t.url,
  t.method,
  t.timeoutMs,
  flag(t.requiresApproval),
  t.secretSealed,
  t.createdAt,
];

/** What an update of a tool writes (in this order), then tool_id, account_id, chatbot_id. */
export const toolUpdateValues = (t: ToolRecord, flag: Flag) => [
  t.name,
  t.description,
  t.parameters,
  t.url,
  t.method,
  t.timeoutMs,
  flag(t.requiresApproval),
  t.secretSealed,
  t.toolId,
  t.accountId,
  t.chatbotId,
];

/** A row of `agent_settings`. */
export interface SettingsRow {
  chatbot_id: string;
  account_id: string;
  instructions: string;
  handover_phrases: string;
  dont_know_limit: Big;
  daily_token_budget: Big;
  updated_at: Big;
}

export const SETTINGS_COLUMNS =
  "chatbot_id, account_id, instructions, handover_phrases, dont_know_limit, daily_token_budget, updated_at";

export const toSettings = (r: SettingsRow): AgentSettingsRecord => ({
  chatbotId: r.chatbot_id,
  accountId: r.account_id,
  instructions: r.instructions,
  handoverPhrases: JSON.parse(r.handover_phrases) as string[],
  dontKnowLimit: Number(r.dont_know_limit),
  dailyTokenBudget: Number(r.daily_token_budget),
  updatedAt: Number(r.updated_at),
});

export const settingsValues = (s: AgentSettingsRecord) => [
  s.chatbotId,
  s.accountId,
  s.instructions,
  JSON.stringify(s.handoverPhrases),
  s.dontKnowLimit,
  s.dailyTokenBudget,
  s.updatedAt,
];

/** A row of `conversation_handovers`. */
export interface HandoverRow {
  conversation_id: string;
  reason: string;
  at: Big;
}

export const toHandover = (r: HandoverRow): HandoverRecord => ({
  conversationId: r.conversation_id,
  reason: r.reason,
  at: Number(r.at),
});

/** A row of `tool_approvals`. */
export interface ApprovalRow {
  account_id: string;
  chatbot_id: string;
  conversation_id: string;
  call_id: string;
  message_id: string;
  message_order: Big;
  tool_name: string;
  arguments: string;
  status: string;
  decided_by: string;
  decided_at: Big | null;
  created_at: Big;
}

export const APPROVAL_COLUMNS =
  "account_id, chatbot_id, conversation_id, call_id, message_id, message_order, tool_name, arguments, status, decided_by, " +
  "decided_at, created_at";

export const toApproval = (r: ApprovalRow): ToolApprovalRecord => ({
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  conversationId: r.conversation_id,
  callId: r.call_id,
  messageId: r.message_id,
  messageOrder: Number(r.message_order),
  toolName: r.tool_name,
  arguments: r.arguments,
  status: r.status === "approved" || r.status === "refused" ? r.status : "pending",
  decidedBy: r.decided_by,
  decidedAt: r.decided_at === null ? null : Number(r.decided_at),
  createdAt: Number(r.created_at),
});

export const approvalValues = (a: ToolApprovalRecord) => [
  a.accountId,
  a.chatbotId,
  a.conversationId,
  a.callId,
  a.messageId,
  a.messageOrder,
  a.toolName,
  a.arguments,
  a.status,
  a.decidedBy,
  a.decidedAt,
  a.createdAt,
];

/** A row of `agent_drafts`. */
export interface DraftRow {
  chatbot_id: string;
  account_id: string;
  draft: string;
  updated_at: Big;
}

export const toDraft = (r: DraftRow): AgentDraftRecord => {
  const d = JSON.parse(r.draft) as Partial<AgentDraftRecord>;
  return {
    chatbotId: r.chatbot_id,
    accountId: r.account_id,
    instructions: d.instructions ?? "",
    knowledge: d.knowledge ?? [],
    model: d.model ?? "",
    ...(d.tools ? { tools: d.tools } : {}),
    ...(d.leftOutSources ? { leftOutSources: d.leftOutSources } : {}),
    updatedAt: Number(r.updated_at),
  };
};

export const draftValues = (d: AgentDraftRecord) => [
  d.chatbotId,
  d.accountId,
  JSON.stringify({
    instructions: d.instructions,
    knowledge: d.knowledge,
    model: d.model,
    tools: d.tools,
    leftOutSources: d.leftOutSources,
  }),
  d.updatedAt,
];
