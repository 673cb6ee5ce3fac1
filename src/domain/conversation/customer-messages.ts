import type { ChatbotRecord } from "../account/repository.js";
import { AgentUnavailableError } from "../agent/agent.js";
import { SILENT } from "../agent/director.js";
import type { FrameCaller } from "../caller.js";
import { DomainError } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { requireContent } from "../validate.js";
import type { ConversationCore } from "./conversation-core.js";
import { handOver } from "./handover.js";
import type { ConversationRecord, MessageRecord, NewConversation } from "./repository.js";
import { AI_AGENT, NEW_CONVERSATION } from "./rules.js";

/** An event of a streamed send. */
export type SendEvent =
  | { type: "user_message"; message: MessageRecord }
  | { type: "delta"; text: string }
  | { type: "reply"; message: MessageRecord };

/** The channel of conversations started in the frame. */
export const WEB_CHANNEL = "web";
/** How many of the latest messages the agent is shown. */
const AGENT_CONTEXT = 20;

/** The customer writing in the frame: the message stored, then the AI agent's reply streamed and stored. */
export class CustomerMessages {
  constructor(private readonly c: ConversationCore) {}

  /**
   * Stores the user's message, then streams and stores the agent's reply (none while an operator holds the
   * conversation).
   */
  async *sendStream(
    caller: FrameCaller,
    input: { conversationId: string; content: string; idempotencyKey?: string },
    signal: AbortSignal,
  ): AsyncGenerator<SendEvent> {
    const content = requireContent("content", input.content);
    const keyed = this.c.keys.request(caller, input.idempotencyKey, "send_message", {
      conversationId: input.conversationId,
      content,
    });
    const now = this.c.d.clock.now();
    let conversationId: string;
    let start: NewConversation | undefined;
    let before: ConversationRecord | undefined;
    let chatbot: ChatbotRecord | undefined;
    if (input.conversationId === "") {
      conversationId = newId();
      start = {
        conversationId,
        accountId: caller.accountId,
        chatbotId: caller.chatbotId,
        userId: caller.userId,
        channel: WEB_CHANNEL,
        ...NEW_CONVERSATION,
      };
    } else {
      conversationId = requireUuid("conversation_id", input.conversationId);
      // The agent's chatbot is read with the conversation (a back end may send both reads in one round trip).
      [before, chatbot] = await Promise.all([
        this.c.frameConversation(caller, conversationId),
        this.c.d.chatbots.byId(caller.chatbotId),
      ]);
    }
    // A closed conversation is reopened by the customer's message (decisions §5): its watchers learn it.
    const reopens = before !== undefined && this.c.effectiveStatus(before) === "closed";
    const sent = await this.c.keys.once<{
      message: MessageRecord;
      conversation?: ConversationRecord;
      recent?: Promise<MessageRecord[]>;
    }>(keyed, () =>
      this.c.append(
        caller.accountId,
        conversationId,
        { messageId: newId(), role: "user", content, toolCalls: "", documents: [], createdAt: now },
        start,
        reopens,
        keyed,
        AGENT_CONTEXT,
      ),
    );
    const userMessage = sent.message;
    // A retry of a stored message (no conversation: its first answer): nothing is written again.
    const conv = sent.conversation ?? (await this.c.frameConversation(caller, userMessage.conversationId));
    conversationId = conv.conversationId;
    yield { type: "user_message", message: userMessage };
    if (!sent.conversation) {
      const [next] = (await this.c.d.conversations.messages(conv, 1, userMessage.messageOrder)).messages;
      if (next?.role === "assistant") yield { type: "reply", message: next };
      // Answered already, or followed by other messages: the agent answers only the latest.
      if (next) return;
    }

    if (conv.assignedTo !== AI_AGENT) return;
    chatbot ??= (await this.c.d.chatbots.byId(caller.chatbotId))!;
    // Read with the message's unit of work (a retry of a stored message reads it now).
    const history = (await (sent.recent ?? this.c.d.conversations.recent(conv, AGENT_CONTEXT))).map((m) => ({
      role: m.role,
      content: m.content,
      toolCalls: m.toolCalls,
    }));
    // Whom the reply is for, as the access token says (a tool call carries it; a model never chooses it).
    const scope = { accountId: caller.accountId, conversationId, userId: caller.userId };
    try {
      for await (const ev of this.c.d.agent.reply(chatbot, history, signal, scope)) {
        if (ev.type === "delta") {
          yield { type: "delta", text: ev.text };
          continue;
        }
        // Handed over already: the team answers.
        if (ev.handover === SILENT) return;
        const { message: reply } = await this.c.append(caller.accountId, conversationId, {
          messageId: newId(),
          role: "assistant",
          content: ev.content,
          toolCalls: ev.toolCalls,
          documents: ev.documents,
          createdAt: this.c.d.clock.now(),
        });
        if (ev.handover) await handOver(this.c, caller.accountId, conversationId, ev.handover);
        yield { type: "reply", message: reply };
        return;
      }
    } catch (e) {
      if (e instanceof DomainError) throw e;
      throw new DomainError("unavailable", "the AI agent could not answer; your message was saved, please try again", {
        cause: e,
      });
    }
    if (!signal.aborted)
      throw new DomainError("unavailable", "the AI agent could not answer; your message was saved, please try again", {
        cause: new AgentUnavailableError("agent ended without a reply"),
      });
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
