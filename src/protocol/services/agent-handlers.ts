import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  AgentBehaviourSchema,
  AgentService as AgentServiceDesc,
  ChatbotToolSchema,
  ToolApprovalSchema,
} from "../../../gen/aiagent/v1/agent_service_pb.js";
import type { ToolApprovalRecord } from "../../domain/agent/approvals.js";
import type { AgentSettingsRecord, AgentTools, ToolRecord } from "../../domain/agent/tools.js";
import type { ToolApprovals } from "../../domain/conversation/tool-approvals.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";
import { message } from "./conversation-handlers.js";

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

/**
 * The AgentService methods, on the account's caller the gate admitted (ID token; an admin for the configuration, any
 * person of the account for the approvals).
 */
export function agentHandlers(tools: AgentTools, approvals: ToolApprovals): Handlers<typeof AgentServiceDesc> {
  return {
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
