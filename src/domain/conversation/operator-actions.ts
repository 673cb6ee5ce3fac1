import type { AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import { DomainError, invalidArgument } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { optionalText, requireContent, requireEmail } from "../validate.js";
import { nameFor } from "./activity.js";
import type { ConversationCore, ConversationServiceDeps } from "./conversation-core.js";
import type { ActivityKind, ConversationSummary, MessageRecord, NewMessage } from "./repository.js";
import { AI_AGENT } from "./rules.js";

const MAX_OPERATOR_NAME = 80;

/** The operators' actions on a conversation: read, take over, release, reply, close and reopen. */
export class OperatorActions {
  constructor(
    /** What the use cases share: this instance's caches, keyed writes, the unit of work of a change. */
    private readonly c: Pick<
      ConversationCore,
      "accountConversation" | "append" | "change" | "effectiveStatus" | "keys"
    >,
    private readonly d: Pick<ConversationServiceDeps, "auditLog" | "clock" | "displayNameOf" | "isPersonOf" | "router">,
  ) {}

  /** Moves the account's read marker to the latest message. */
  async markRead(caller: AccountCaller, conversationId: string): Promise<ConversationSummary> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    return this.c.change(conv, "conversation.read", (tx) => tx.conversations.markRead(conv.conversationId));
  }

  /** Moves the account's read marker back before the latest customer message: one unread message again. */
  async markUnread(caller: AccountCaller, conversationId: string): Promise<ConversationSummary> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    // Unread already (a customer message after the marker): nothing changes, and no event says otherwise.
    const type = conv.unreadCount > 0 ? undefined : "conversation.unread";
    return this.c.change(conv, type, (tx) => tx.conversations.markUnread(conv.conversationId));
  }

  /** Assigns the conversation to an operator, shown to the customer by name; the AI agent stops answering. */
  async takeOver(
    caller: AccountCaller,
    conversationId: string,
    operatorEmail: string,
    operatorName = "",
    idempotencyKey?: string,
  ): Promise<ConversationSummary> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const operator = operatorEmail === "" ? caller.email : requireEmail("operator_email", operatorEmail);
    const name = optionalText("operator_name", operatorName, MAX_OPERATOR_NAME).trim();
    const keyed = this.c.keys.request(caller, idempotencyKey, "take_over", { conversationId, operator, name });
    return this.c.keys.once(keyed, async () => {
      if (!(await this.d.isPersonOf(caller.accountId, operator)))
        throw invalidArgument(
          "operator_email",
          `${operator} is not a person of this account who has joined (invite them, and wait until they accept)`,
        );
      // An admin assigning a teammate sends no name: the customer sees the one the teammate set in their profile.
      const shown =
        name ||
        (await this.d.displayNameOf?.(caller.accountId, operator)) ||
        operator.slice(0, operator.lastIndexOf("@"));
      // The timeline: taken (by the person themselves) or assigned (by someone else), from whoever held it.
      const kind = operator.toLowerCase() === caller.email.toLowerCase() ? "taken_over" : "assigned";
      const line = await this.line(caller, conv, kind, operator, shown);
      return this.c.change(
        conv,
        "conversation.assigned",
        async (tx) => {
          await tx.conversations.assign(conv.conversationId, operator, shown);
          if (conv.assignedTo !== operator) await this.audited(tx, caller, conv, operator);
        },
        keyed,
        conv.assignedTo === operator ? undefined : line,
      );
    });
  }

  /** The audit log's line for a change of who holds the conversation, in the change's unit of work. */
  private audited(
    tx: AuditTx,
    caller: AccountCaller,
    conv: { conversationId: string; assignedTo: string },
    to: string,
  ): Promise<void> {
    return (
      this.d.auditLog?.record(tx, caller, "conversation.assigned", conv.conversationId, {
        from: conv.assignedTo,
        to,
      }) ?? Promise.resolve()
    );
  }

  /** A timeline line of the caller's change to `conv`, from its holder to `to` (names looked up now). */
  private async line(
    caller: AccountCaller,
    conv: { accountId: string; conversationId: string; assignedTo: string; operatorName: string },
    kind: ActivityKind,
    to = "",
    toName = "",
  ) {
    const name = (email: string) => nameFor(this.d.displayNameOf?.bind(this.d), caller.accountId, email);
    const holds = kind !== "closed" && kind !== "reopened";
    return {
      accountId: conv.accountId,
      conversationId: conv.conversationId,
      kind,
      actorEmail: caller.email,
      actorName: await name(caller.email),
      fromEmail: holds ? conv.assignedTo : "",
      fromName: holds
        ? conv.assignedTo === AI_AGENT
          ? "AI agent"
          : conv.operatorName || (await name(conv.assignedTo))
        : "",
      toEmail: to,
      toName: to === AI_AGENT ? "AI agent" : toName,
      detail: "",
      createdAt: this.d.clock.now(),
    };
  }

  /** Hands the conversation back to the AI agent. */
  async release(caller: AccountCaller, conversationId: string, idempotencyKey?: string): Promise<ConversationSummary> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const keyed = this.c.keys.request(caller, idempotencyKey, "release", { conversationId });
    return this.c.keys
      .once(keyed, async () => {
        const line = await this.line(caller, conv, "released", AI_AGENT);
        return this.c.change(
          conv,
          "conversation.assigned",
          async (tx) => {
            // A conversation the agent handed over answers again once released.
            await tx.agents.clearHandover(conv.conversationId);
            await tx.conversations.assign(conv.conversationId, AI_AGENT, "");
            if (conv.assignedTo !== AI_AGENT) await this.audited(tx, caller, conv, AI_AGENT);
          },
          keyed,
          conv.assignedTo === AI_AGENT ? undefined : line,
        );
      })
      .finally(() => this.freed(conv.accountId));
  }

  /** A person may hold one conversation fewer: the account's waiting conversations may come to them (routing.ts). */
  private freed(accountId: string): void {
    const routing = this.d.router;
    routing?.soon(() => routing.drain(accountId));
  }

  /** Stores an operator's reply; a closed conversation must be reopened first. */
  async reply(
    caller: AccountCaller,
    conversationId: string,
    content: string,
    idempotencyKey?: string,
  ): Promise<MessageRecord> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const text = requireContent("content", content, LIMITS.reply);
    const keyed = this.c.keys.request(caller, idempotencyKey, "reply", { conversationId, content: text });
    const { message } = await this.c.keys.once(keyed, async () => {
      if (this.c.effectiveStatus(conv) === "closed")
        throw new DomainError("failed_precondition", "the conversation is closed; reopen it before replying");
      const m: NewMessage = {
        messageId: newId(),
        role: "operator",
        content: text,
        toolCalls: "",
        documents: [],
        createdAt: this.d.clock.now(),
        // Its author by display name as it is now, as the timeline names people (issue 45).
        authorName: await nameFor(this.d.displayNameOf?.bind(this.d), caller.accountId, caller.email),
      };
      return this.c.append(caller.accountId, conv.conversationId, m, undefined, false, keyed);
    });
    return message;
  }

  /** Closes or reopens a conversation. */
  async setStatus(
    caller: AccountCaller,
    conversationId: string,
    status: "live" | "closed",
    idempotencyKey?: string,
  ): Promise<ConversationSummary> {
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const keyed = this.c.keys.request(caller, idempotencyKey, status === "closed" ? "close" : "reopen", {
      conversationId,
    });
    // Only a change of what readers see is an event: closing a closed conversation records nothing.
    const type =
      this.c.effectiveStatus(conv) === status
        ? undefined
        : status === "closed"
          ? "conversation.closed"
          : "conversation.reopened";
    return this.c.keys
      .once(keyed, async () => {
        const line = type && (await this.line(caller, conv, status === "closed" ? "closed" : "reopened"));
        return this.c.change(
          conv,
          type,
          (tx) => tx.conversations.setStatus(conv.conversationId, status, this.d.clock.now()),
          keyed,
          line || undefined,
        );
      })
      .finally(() => {
        if (status === "closed") this.freed(conv.accountId);
      });
  }
}
