import type { AgentTurn, ToolCallRecord } from "../agent/agent.js";
import { MAX_APPROVALS, type ToolApprovalRecord } from "../agent/approvals.js";
import { SILENT } from "../agent/director.js";
import type { AccountCaller } from "../caller.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { requireId } from "../validate.js";
import type { ConversationCore, ConversationServiceDeps, ConversationTx } from "./conversation-core.js";
import { handOver } from "./handover.js";
import type { ConversationRecord, MessageRecord, NoteRecord } from "./repository.js";
import { AI_AGENT } from "./rules.js";

/** How many of the latest messages the agent is shown when it carries on after a decision. */
const AGENT_CONTEXT = 20;
/** The longest a reply after a decision may take (the agent's own step and time bounds apply within it). */
const CARRY_ON_MS = 10 * 60_000;

/** Records, with the reply that asked for them, the reply's tool calls that wait for a person's approval. */
export async function recordWaitingCalls(
  tx: Pick<ConversationTx, "approvals">,
  conv: Pick<ConversationRecord, "accountId" | "chatbotId" | "conversationId">,
  message: MessageRecord,
): Promise<void> {
  for (const c of waitingCalls(message.toolCalls))
    await tx.approvals.add({
      accountId: conv.accountId,
      chatbotId: conv.chatbotId,
      conversationId: conv.conversationId,
      callId: c.id,
      messageId: message.messageId,
      messageOrder: message.messageOrder,
      toolName: c.name,
      arguments: c.arguments,
      status: "pending",
      decidedBy: "",
      decidedAt: null,
      createdAt: message.createdAt,
    });
}

function waitingCalls(toolCalls: string): ToolCallRecord[] {
  if (!toolCalls.includes("awaiting_approval")) return [];
  try {
    const list = JSON.parse(toolCalls) as unknown;
    if (!Array.isArray(list)) return [];
    return (list as ToolCallRecord[]).filter(
      (c) => c?.status === "awaiting_approval" && typeof c.id === "string" && typeof c.name === "string",
    );
  } catch {
    return [];
  }
}

/**
 * Stores the agent's reply in the conversation, with what goes in its unit of work (`inUnit`: the claim it completes,
 * the calls it leaves waiting).
 */
export async function appendReply(
  c: Pick<ConversationCore, "append">,
  conv: Pick<ConversationRecord, "accountId" | "conversationId">,
  reply: Pick<MessageRecord, "content" | "toolCalls" | "documents">,
  createdAt: number,
  inUnit: (tx: ConversationTx, message: MessageRecord) => Promise<void>,
): Promise<MessageRecord> {
  const { content, toolCalls, documents } = reply;
  const m = { messageId: newId(), role: "assistant" as const, content, toolCalls, documents, createdAt };
  return (await c.append(conv.accountId, conv.conversationId, m, undefined, false, undefined, 0, inUnit)).message;
}

/** What a decision answers: the call as now stored, and the agent's reply that carried on (none: it stayed quiet). */
export interface Decided {
  approval: ToolApprovalRecord;
  reply: MessageRecord | undefined;
}

/**
 * The tool calls that wait for a person of the team: listed with their names and arguments (to the account's people
 * only), approved or refused once. A decision is stored first (one person decides: a second finds it decided), then
 * the agent carries on from it on this instance, whichever instance stored the waiting call: approved, the call runs
 * and its result goes back to the model; refused, the model is told. Its reply is stored and reaches the frame as any
 * reply does.
 */
export class ToolApprovals {
  constructor(
    private readonly c: Pick<ConversationCore, "accountConversation" | "append">,
    private readonly d: Pick<
      ConversationServiceDeps,
      "agent" | "approvals" | "chatbots" | "clock" | "conversations" | "log" | "transaction" | "agentLookingUp"
    >,
  ) {}

  /** The conversation's calls that waited for approval, oldest first. */
  async list(caller: AccountCaller, conversationId: string): Promise<ToolApprovalRecord[]> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    return this.d.approvals.forConversation(conv.conversationId, MAX_APPROVALS);
  }

  async decide(
    caller: AccountCaller,
    input: { conversationId: string; callId: string; decision: string },
  ): Promise<Decided> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", input.conversationId));
    const callId = requireId("call_id", input.callId, 128);
    if (input.decision !== "approve" && input.decision !== "refuse")
      throw invalidArgument("decision", "must be approve or refuse");
    const approved = input.decision === "approve";
    const waiting = await this.d.approvals.get(conv.conversationId, callId);
    if (!waiting) throw notFound("tool call");
    if (waiting.status !== "pending") throw alreadyDecided(waiting);
    if (conv.assignedTo !== AI_AGENT)
      throw new DomainError(
        "failed_precondition",
        "the conversation is held by a person of the team: hand it back to the AI agent to decide on its calls",
      );
    const status = approved ? "approved" : "refused";
    const at = this.d.clock.now();
    await this.d.transaction(async (tx) => {
      if (!(await tx.approvals.decide(conv.conversationId, callId, status, caller.email, at)))
        throw alreadyDecided((await tx.approvals.get(conv.conversationId, callId)) ?? waiting);
      // The team's record of who decided (the inbox and webhooks carry it as note.created).
      const note: NoteRecord = {
        noteId: newId(),
        accountId: conv.accountId,
        conversationId: conv.conversationId,
        authorEmail: caller.email,
        content: `${approved ? "Approved" : "Refused"} the AI agent's call of ${waiting.toolName}.`,
        createdAt: at,
      };
      await tx.notes.add(note);
      await this.d.log.record(tx, conv.accountId, [
        { type: "note.created", data: { conversationId: conv.conversationId, note } },
      ]);
    });
    const approval: ToolApprovalRecord = { ...waiting, status, decidedBy: caller.email, decidedAt: at };
    return { approval, reply: await this.carryOn(conv, waiting, approved) };
  }

  /** The agent's reply after the decision, stored (undefined: the agent stays quiet, the team holds the conversation). */
  private async carryOn(
    conv: ConversationRecord,
    waiting: ToolApprovalRecord,
    approved: boolean,
  ): Promise<MessageRecord | undefined> {
    const chatbot = await this.d.chatbots.byId(conv.chatbotId);
    if (!chatbot) throw notFound("chatbot");
    const history = await this.historyNow(conv, waiting);
    const scope = {
      accountId: conv.accountId,
      conversationId: conv.conversationId,
      userId: conv.userId,
      decision: { callId: waiting.callId, approved },
    };
    try {
      for await (const ev of this.d.agent.reply(chatbot, history, AbortSignal.timeout(CARRY_ON_MS), scope)) {
        // No send stream carries this reply: the customer's watch stream shows its looking-up line.
        if (ev.type === "activity") this.d.agentLookingUp?.(conv);
        if (ev.type !== "done") continue;
        if (ev.handover === SILENT) return undefined;
        const message = await appendReply(this.c, conv, ev, this.d.clock.now(), (tx, m) =>
          recordWaitingCalls(tx, conv, m),
        );
        if (ev.handover) await handOver(this.d, conv.accountId, conv.conversationId, ev.handover);
        return message;
      }
    } catch (e) {
      if (e instanceof DomainError) throw e;
      throw new DomainError("unavailable", "the decision is stored, but the AI agent could not answer after it", {
        cause: e,
      });
    }
    return undefined;
  }

  /**
   * The conversation as the agent is shown it after a decision: its latest messages up to now (what the customer
   * wrote while the call waited included), and the reply that recorded the waiting call, read apart when it is older.
   */
  private async historyNow(conv: ConversationRecord, waiting: ToolApprovalRecord): Promise<AgentTurn[]> {
    const count = (await this.d.conversations.byId(conv.conversationId))?.messageCount ?? conv.messageCount;
    const start = Math.max(0, count - AGENT_CONTEXT);
    const latest = (await this.d.conversations.messages(conv, AGENT_CONTEXT, start)).messages;
    // message_order counts from 1: the waiting reply is at offset messageOrder - 1.
    const older =
      waiting.messageOrder - 1 < start
        ? (await this.d.conversations.messages(conv, 1, waiting.messageOrder - 1)).messages
        : [];
    return [...older, ...latest].map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls }));
  }
}

function alreadyDecided(a: ToolApprovalRecord): DomainError {
  return new DomainError("failed_precondition", `call_id: the call was ${a.status} already by ${a.decidedBy}`, {
    field: "call_id",
  });
}
