import type { ChatbotRecord } from "../account/repository.js";
import { type AgentTurn, AgentUnavailableError, type PreparedReply } from "../agent/agent.js";
import { SILENT } from "../agent/director.js";
import type { FrameCaller } from "../caller.js";
import { DomainError } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { requireContent } from "../validate.js";
import type { ConversationCore, ConversationServiceDeps } from "./conversation-core.js";
import { handOver } from "./handover.js";
import { REPLY_LEASE_MS, REPLY_RENEW_MS, REPLY_WAIT_MS, ReplyClaimLost } from "./replies.js";
import type { ConversationRecord, MessageRecord, NewConversation } from "./repository.js";
import { AI_AGENT, NEW_CONVERSATION } from "./rules.js";
import { appendReply, recordWaitingCalls } from "./tool-approvals.js";

/** An event of a streamed send. */
export type SendEvent =
  | { type: "user_message"; message: MessageRecord }
  | { type: "delta"; text: string }
  /** The agent is running tool calls: the frame shows a short line (never their arguments or results). */
  | { type: "activity"; activity: "looking_up" }
  | { type: "reply"; message: MessageRecord };

/** The channel of conversations started in the frame. */
export const WEB_CHANNEL = "web";
/** A conversation the frame's customer starts with their first message (or file). */
export function webConversation(caller: FrameCaller, conversationId: string): NewConversation {
  return {
    conversationId,
    accountId: caller.accountId,
    chatbotId: caller.chatbotId,
    userId: caller.userId,
    channel: WEB_CHANNEL,
    ...NEW_CONVERSATION,
  };
}

/** How many of the latest messages the agent is shown. */
const AGENT_CONTEXT = 20;

/** Resolves after `ms`, or at once when `signal` aborts. */
function pauseFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const t = setTimeout(finish, ms);
    function finish() {
      clearTimeout(t);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish, { once: true });
  });
}

/** The customer writing in the frame: the message stored, then the AI agent's reply streamed and stored. */
export class CustomerMessages {
  constructor(
    /** What the use cases share: this instance's caches, keyed writes, the unit of work of a change. */
    private readonly c: Pick<ConversationCore, "append" | "effectiveStatus" | "frameConversation" | "keys">,
    private readonly d: Pick<
      ConversationServiceDeps,
      "agent" | "chatbots" | "clock" | "conversations" | "customerLimits" | "log" | "replies" | "transaction"
    >,
  ) {}

  /**
   * Stores the user's message, then streams and stores the agent's reply (none while an operator holds the
   * conversation).
   */
  async *sendStream(
    caller: FrameCaller,
    input: { conversationId: string; content: string; idempotencyKey?: string },
    signal: AbortSignal,
  ): AsyncGenerator<SendEvent> {
    const content = requireContent("content", input.content, LIMITS.message);
    const keyed = this.c.keys.request(caller, input.idempotencyKey, "send_message", {
      conversationId: input.conversationId,
      content,
    });
    const now = this.d.clock.now();
    let conversationId: string;
    let start: NewConversation | undefined;
    let before: ConversationRecord | undefined;
    let chatbot: ChatbotRecord | undefined;
    if (input.conversationId === "") {
      conversationId = newId();
      start = webConversation(caller, conversationId);
    } else {
      conversationId = requireUuid("conversation_id", input.conversationId);
      // The agent's chatbot is read with the conversation (a back end may send both reads in one round trip).
      [before, chatbot] = await Promise.all([
        this.c.frameConversation(caller, conversationId),
        this.d.chatbots.byId(caller.chatbotId),
      ]);
    }
    // A closed conversation is reopened by the customer's message (decisions §5): its watchers learn it.
    const reopens = before !== undefined && this.c.effectiveStatus(before) === "closed";
    // The reply's claim goes with the message, when the agent answers it: a retry then finds it held.
    const claim = newId();
    // The reads the agent's reply begins with, made in the message's unit (a back end sends them with its commit).
    let prepared: Promise<PreparedReply> | undefined;
    const sent = await this.c.keys.once<{
      message: MessageRecord;
      conversation?: ConversationRecord;
      recent?: Promise<MessageRecord[]>;
    }>(keyed, async () => {
      // Counted only when the message is to be stored: a retry of a stored one is not.
      await this.d.customerLimits?.message(caller.accountId, caller.userId, start !== undefined);
      return this.c.append(
        caller.accountId,
        conversationId,
        { messageId: newId(), role: "user", content, toolCalls: "", documents: [], createdAt: now },
        start,
        reopens,
        keyed,
        AGENT_CONTEXT,
        async (tx, message, conversation) => {
          if (conversation.assignedTo !== AI_AGENT) return;
          await tx.replies.open({
            messageId: message.messageId,
            conversationId,
            claim,
            leaseUntil: now + REPLY_LEASE_MS,
          });
          // Not waited for here, as the history is not: should the unit fail, nobody waits for them.
          prepared = this.d.agent.prepare?.(tx, caller.chatbotId, conversationId);
          prepared?.catch(() => undefined);
        },
      );
    });
    const userMessage = sent.message;
    // A retry of a stored message (no conversation: its first answer): nothing is written again.
    let conv = sent.conversation ?? (await this.c.frameConversation(caller, userMessage.conversationId));
    conversationId = conv.conversationId;
    yield { type: "user_message", message: userMessage };

    let held: string | undefined;
    let history: Promise<MessageRecord[]> | undefined;
    let ahead: Promise<PreparedReply> | undefined;
    if (sent.conversation) {
      if (conv.assignedTo !== AI_AGENT) return;
      held = claim;
      history = sent.recent;
      ahead = prepared;
    }
    for (;;) {
      if (held === undefined) {
        // A retry, or a claim lost: the message's own reply when stored, else the claim once it is free.
        const settled = await this.settle(caller, conv, userMessage, signal);
        if (settled === undefined) return;
        if ("reply" in settled) {
          yield { type: "reply", message: settled.reply };
          return;
        }
        ({ conv, claim: held } = settled);
        history = undefined;
        ahead = undefined;
      }
      chatbot ??= (await this.d.chatbots.byId(caller.chatbotId))!;
      // The agent sees the conversation up to this message (read with the message's unit when it was just stored).
      const turns = (
        await (history ??
          this.d.conversations
            .messages(conv, AGENT_CONTEXT, Math.max(0, userMessage.messageOrder - AGENT_CONTEXT))
            .then((p) => p.messages))
      ).map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls }));
      const answered = yield* this.answer(caller, conv, userMessage, held, chatbot, turns, signal, ahead);
      if (answered) return;
      // Another claimant took the message over (this instance stalled past its lease): its reply is the one.
      held = undefined;
    }
  }

  /**
   * Streams the agent's reply to `userMessage` under the claim `held`, renewing its lease meanwhile, and stores it
   * with the claim completed. False when the claim was lost before the reply was stored (nothing stored); on a
   * failure the claim is released so that a retry asks the agent again.
   */
  private async *answer(
    caller: FrameCaller,
    conv: ConversationRecord,
    userMessage: MessageRecord,
    held: string,
    chatbot: ChatbotRecord,
    history: AgentTurn[],
    signal: AbortSignal,
    prepared?: Promise<PreparedReply>,
  ): AsyncGenerator<SendEvent, boolean> {
    const replies = this.d.replies;
    const messageId = userMessage.messageId;
    const renew = setInterval(() => {
      replies.renew(messageId, held, this.d.clock.now() + REPLY_LEASE_MS).catch(() => undefined);
    }, REPLY_RENEW_MS);
    renew.unref?.();
    let stored = false;
    // Whom the reply is for, as the access token says (a tool call carries it; a model never chooses it).
    const scope = {
      accountId: caller.accountId,
      conversationId: conv.conversationId,
      userId: caller.userId,
      ...(prepared ? { prepared } : {}),
    };
    try {
      try {
        for await (const ev of this.d.agent.reply(chatbot, history, signal, scope)) {
          if (ev.type === "delta") {
            yield { type: "delta", text: ev.text };
            continue;
          }
          if (ev.type === "activity") {
            yield ev;
            continue;
          }
          // Handed over already: the team answers (nothing stored; the claim is released).
          if (ev.handover === SILENT) return true;
          const reply = await appendReply(this.c, conv, ev, this.d.clock.now(), async (tx, message) => {
            // A lost claim fails the unit (here, or at its commit): it rolls back, and another claimant answers.
            await tx.replies.complete(messageId, held, message.messageOrder);
            await recordWaitingCalls(tx, conv, message);
          });
          stored = true;
          if (ev.handover) await handOver(this.d, caller.accountId, conv.conversationId, ev.handover);
          yield { type: "reply", message: reply };
          return true;
        }
      } catch (e) {
        if (e instanceof ReplyClaimLost) return false;
        if (e instanceof DomainError) throw e;
        throw new DomainError(
          "unavailable",
          "the AI agent could not answer; your message was saved, please try again",
          {
            cause: e,
          },
        );
      }
      if (!signal.aborted)
        throw new DomainError(
          "unavailable",
          "the AI agent could not answer; your message was saved, please try again",
          {
            cause: new AgentUnavailableError("agent ended without a reply"),
          },
        );
      return true;
    } finally {
      clearInterval(renew);
      // Not answered (a failure, or the caller went away): the next retry asks the agent again, at once.
      if (!stored) await replies.release(messageId, held).catch(() => undefined);
    }
  }

  /**
   * What a retry of a stored message answers: its own reply once stored (waiting for another claimant's), or the
   * claim when it is free (none yet, released after a failure, or its lease ended) and the agent still answers the
   * conversation. Undefined when nothing is to be answered: an operator holds the conversation, the message was
   * never the agent's and others followed it, or the caller went away.
   */
  private async settle(
    caller: FrameCaller,
    conv: ConversationRecord,
    userMessage: MessageRecord,
    signal: AbortSignal,
  ): Promise<{ reply: MessageRecord } | { conv: ConversationRecord; claim: string } | undefined> {
    const replies = this.d.replies;
    const giveUpAt = Date.now() + REPLY_WAIT_MS;
    let pause = 10;
    for (;;) {
      const found = await replies.find(userMessage.messageId);
      if (found?.replyOrder != null) {
        const [reply] = (await this.d.conversations.messages(conv, 1, found.replyOrder - 1)).messages;
        return reply && { reply };
      }
      const now = this.d.clock.now();
      if (found === undefined || found.leaseUntil <= now) {
        const current = await this.c.frameConversation(caller, conv.conversationId);
        if (current.assignedTo !== AI_AGENT) return undefined;
        // Never claimed (stored while an operator held the conversation): the agent answers only the latest.
        if (found === undefined && current.messageCount !== userMessage.messageOrder) return undefined;
        const claim = newId();
        const taken = await replies.take(
          {
            messageId: userMessage.messageId,
            conversationId: conv.conversationId,
            claim,
            leaseUntil: now + REPLY_LEASE_MS,
          },
          now,
        );
        if (taken) return { conv: current, claim };
        continue;
      }
      if (signal.aborted) return undefined;
      if (Date.now() >= giveUpAt)
        throw new DomainError("unavailable", "the AI agent is still answering this message; retry to read its reply", {
          retryAfterSeconds: 2,
        });
      // Another claimant is answering: look again soon (its reply is one indexed read away).
      await pauseFor(pause, signal);
      pause = Math.min(pause * 2, 200);
    }
  }

  /** sendStream collected into one answer. */
  async send(
    caller: FrameCaller,
    input: { conversationId: string; content: string; idempotencyKey?: string },
    signal: AbortSignal,
  ): Promise<{ conversationId: string; userMessage: MessageRecord; reply: MessageRecord | undefined }> {
    let userMessage: MessageRecord | undefined;
    let reply: MessageRecord | undefined;
    for await (const ev of this.sendStream(caller, input, signal)) {
      if (ev.type === "user_message") userMessage = ev.message;
      else if (ev.type === "reply") reply = ev.message;
    }
    return { conversationId: userMessage!.conversationId, userMessage: userMessage!, reply };
  }
}
