import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  AgentBehaviourSchema,
  AgentDraftSchema,
  AgentService as AgentServiceDesc,
  ChatbotToolSchema,
  ReplayAnswerSchema,
  ToolApprovalSchema,
} from "../../../gen/aiagent/v1/agent_service_pb.js";
import type { ToolApprovalRecord } from "../../domain/agent/approvals.js";
import type { AgentSettingsRecord, AgentTools, ToolRecord } from "../../domain/agent/tools.js";
import type { AgentReplay, DraftView, ReplayAnswer } from "../../domain/conversation/replay.js";
import type { ToolApprovals } from "../../domain/conversation/tool-approvals.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";
import { message } from "./conversation-handlers.js";
import { source, sourceInput } from "./knowledge-handlers.js";

/** A tool as answered: never its secret. */
function tool(t: ToolRecord): MessageInitShape<typeof ChatbotToolSchema> {
  return {
    toolId: t.toolId,
    chatbotId: t.chatbotId,
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    url: t.url,
    method: t.method,
    timeoutMs: t.timeoutMs,
    requiresApproval: t.requiresApproval,
    createdAt: isoTime(t.createdAt),
  };
}

function behaviour(r: { s: AgentSettingsRecord; usedToday: number }): MessageInitShape<typeof AgentBehaviourSchema> {
  return {
    instructions: r.s.instructions,
    handoverPhrases: r.s.handoverPhrases,
    dontKnowLimit: r.s.dontKnowLimit,
    dailyTokenBudget: r.s.dailyTokenBudget,
    tokensUsedToday: Math.min(r.usedToday, 0xffffffff),
  };
}

function approval(a: ToolApprovalRecord): MessageInitShape<typeof ToolApprovalSchema> {
  return {
    conversationId: a.conversationId,
    callId: a.callId,
    messageId: a.messageId,
    toolName: a.toolName,
    arguments: a.arguments,
    status: a.status,
    decidedBy: a.decidedBy,
    decidedAt: a.decidedAt === null ? "" : isoTime(a.decidedAt),
    createdAt: isoTime(a.createdAt),
  };
}

function draft(v: DraftView): MessageInitShape<typeof AgentDraftSchema> {
  const d = v.draft;
  return {
    chatbotId: d.chatbotId,
    instructions: d.instructions,
    knowledge: d.knowledge.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
    model: d.model,
    updatedAt: isoTime(d.updatedAt),
    tools: v.tools.map((t) => ({
      toolId: t.toolId,
      name: t.name,
      description: t.description,
      parameters: t.parameters,
      url: t.url,
      method: t.method,
      timeoutMs: t.timeoutMs,
      requiresApproval: t.requiresApproval,
      change: t.change,
    })),
    removedTools: v.removedTools.map(tool),
    leftOutSourceIds: v.leftOutSources,
    draftSources: v.draftSources.map(source),
  };
}

function answer(a: ReplayAnswer): MessageInitShape<typeof ReplayAnswerSchema> {
  return {
    content: a.content,
    documents: a.documents,
    toolCalls: a.toolCalls,
    handover: a.handover,
    passes: a.passes,
    missing: a.missing,
  };
}

/**
 * The AgentService methods, on the account's caller the gate admitted (ID token; an admin for the configuration, any
 * person of the account for the approvals).
 */
export function agentHandlers(
  tools: AgentTools,
  approvals: ToolApprovals,
  replay: AgentReplay,
): Handlers<typeof AgentServiceDesc> {
  return {
    async getAgentDraft(req, call) {
      return { data: draft(await replay.get(accountCaller(call.auth), req.chatbotId)) };
    },
    async putAgentDraft(req, call) {
      return {
        data: draft(
          await replay.put(accountCaller(call.auth), req.chatbotId, {
            instructions: req.instructions,
            model: req.model,
            knowledge: req.knowledge?.snippets.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
            tools: req.tools?.tools.map((t) => ({
              toolId: t.toolId,
              name: t.name,
              description: t.description,
              parameters: t.parameters,
              url: t.url,
              method: t.method,
              timeoutMs: t.timeoutMs,
              requiresApproval: t.requiresApproval,
            })),
            leftOutSources: req.sources?.leftOutSourceIds,
          }),
        ),
      };
    },
    async deleteAgentDraft(req, call) {
      await replay.drop(accountCaller(call.auth), req.chatbotId);
      return {};
    },
    async publishAgentDraft(req, call) {
      const created = await replay.publish(accountCaller(call.auth), req.chatbotId);
      return { data: { createdTools: created.map((c) => ({ tool: tool(c.tool), secret: c.secret })) } };
    },
    async addAgentDraftSource(req, call) {
      return { data: source(await replay.addSource(accountCaller(call.auth), req.chatbotId, sourceInput(req))) };
    },
    async replayAgentDraft(req, call) {
      const items = await replay.replay(accountCaller(call.auth), req.chatbotId, {
        lastConversations: req.lastConversations,
        cases: req.cases,
      });
      return {
        data: {
          items: items.map((i) => ({
            conversationId: i.conversationId,
            question: i.question,
            live: answer(i.live),
            draft: answer(i.draft),
            changed: i.differences.length > 0,
            differences: i.differences,
          })),
          changed: items.filter((i) => i.differences.length > 0).length,
        },
      };
    },
    async listToolApprovals(req, call) {
      return {
        data: { approvals: (await approvals.list(accountCaller(call.auth), req.conversationId)).map(approval) },
      };
    },
    async decideToolApproval(req, call) {
      const r = await approvals.decide(accountCaller(call.auth), {
        conversationId: req.conversationId,
        callId: req.callId,
        decision: req.decision,
      });
      return { data: { approval: approval(r.approval), ...(r.reply ? { reply: message(r.reply) } : {}) } };
    },
    async createChatbotTool(req, call) {
      const r = await tools.create(accountCaller(call.auth), req.chatbotId, {
        name: req.name,
        description: req.description,
        parameters: req.parameters,
        url: req.url,
        method: req.method,
        timeoutMs: req.timeoutMs,
        requiresApproval: req.requiresApproval,
      });
      return { data: { tool: tool(r.tool), secret: r.secret } };
    },
    async listChatbotTools(req, call) {
      return { data: { tools: (await tools.list(accountCaller(call.auth), req.chatbotId)).map(tool) } };
    },
    async updateChatbotTool(req, call) {
      const r = await tools.update(accountCaller(call.auth), req.chatbotId, req.toolId, {
        name: req.name,
        description: req.description,
        parameters: req.parameters,
        url: req.url,
        method: req.method,
        timeoutMs: req.timeoutMs,
        requiresApproval: req.requiresApproval,
        rotateSecret: req.rotateSecret,
      });
      return { data: { tool: tool(r.tool), secret: r.secret } };
    },
    async deleteChatbotTool(req, call) {
      await tools.delete(accountCaller(call.auth), req.chatbotId, req.toolId);
      return {};
    },
    async getAgentSettings(req, call) {
      return { data: behaviour(await tools.settings(accountCaller(call.auth), req.chatbotId)) };
    },
    async updateAgentSettings(req, call) {
      return {
        data: behaviour(
          await tools.updateSettings(accountCaller(call.auth), req.chatbotId, {
            instructions: req.instructions,
            handoverPhrases: req.handoverPhrases?.phrases,
            dontKnowLimit: req.dontKnowLimit,
            dailyTokenBudget: req.dailyTokenBudget,
          }),
        ),
      };
    },
  };
}
