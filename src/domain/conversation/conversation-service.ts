import type { ChatbotRepository } from "../account/repository.js";
import { type Agent, AgentUnavailableError } from "../agent/agent.js";
import type { AccountCaller, Caller, FrameCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { IdempotencyKeys, type KeyedRequest } from "../idempotency/keys.js";
import type { IdempotencyRepository } from "../idempotency/repository.js";
import { newId, requireUuid } from "../ids.js";
import type { Repositories, Transact } from "../store.js";
import { optionalText, page, requireContent, requireEmail } from "../validate.js";
import type { EventInput, EventLog } from "../webhook/event-log.js";
import type { EventType } from "../webhook/repository.js";
import type { ConversationEvents, ConversationSummary } from "./events.js";
import { type ConversationOwner, ConversationOwners } from "./owners.js";
import { MessagePageCache, type PageForm } from "./page-cache.js";
import type {
  ContactFilter,
  ContactRepository,
  ContactView,
  ConversationRecord,
  ConversationRepository,
  MessageRecord,
  NewConversation,
  NewMessage,
} from "./repository.js";
import { AI_AGENT, effectiveStatus, messageEffect, NEW_CONVERSATION } from "./rules.js";
import { foldForSearch } from "./search-fold.js";
import { viewAssignee } from "./views.js";
import {
  type AccountWatchEvent,
  parseCursor,
  type WatchDeps,
  type WatchEvent,
  Watches,
  type WatchTimings,
} from "./watch.js";

export type { AccountCaller, Caller, FrameCaller } from "../caller.js";
export type { ConversationSummary } from "./events.js";
export { AI_AGENT } from "./rules.js";
export type { AccountWatchEvent, WatchEvent } from "./watch.js";

/** An event of a streamed send. */
export type SendEvent =
  | { type: "user_message"; message: MessageRecord }
  | { type: "delta"; text: string }
  | { type: "reply"; message: MessageRecord };

/** The channel of conversations started in the frame. */
export const WEB_CHANNEL = "web";
const FILTERS: readonly ContactFilter[] = ["all", "unread", "live"];
const MAX_OPERATOR_NAME = 80;

const AGENT_CONTEXT = 20;

/** What the conversation use cases need. */
export interface ConversationServiceDeps {
  contacts: ContactRepository;
  conversations: ConversationRepository;
  chatbots: ChatbotRepository;
  agent: Agent;
  clock: Clock;
  idleCloseSeconds: number;
  /** Where committed changes are hinted to watchers. */
  events: ConversationEvents;
  /** The event log watchers read (the store's). */
  history: WatchDeps["history"];
  /** How watchers look and how long they wait for the store (defaults in watch.ts). */
  watchTimings?: WatchTimings;
  /** Where keyed writes are remembered (written in each write's unit of work). */
  idempotency: Pick<IdempotencyRepository, "find">;
  /** Units of work: each change and its events (the outbox) commit together. */
  transaction: Transact;
  /** The account's event log, written in the unit of work of each change. */
  log: EventLog;
  /** True when the e-mail is a person of the account (its owner or a member): only they take conversations over. */
  isPersonOf(accountId: string, email: string): Promise<boolean>;
}

/** Conversations: the frame's messages, the account's inbox and the operators' actions. */
export class ConversationService {
  /** Who each recently read conversation belongs to (immutable facts), so a page read is one query. */
  private readonly owners = new ConversationOwners();
  /** Recently read pages of messages, served again while the conversation's count says they are current. */
  private readonly pages = new MessagePageCache();
  private readonly watches: Watches;
  private readonly keys: IdempotencyKeys;

  /** Message pages answered from the page cache and built from storage, since start (the metrics). */
  get pageCacheCounts(): { readonly hits: number; readonly misses: number } {
    return this.pages.counts;
  }

  constructor(private readonly d: ConversationServiceDeps) {
    this.watches = new Watches(d, d.watchTimings);
    this.keys = new IdempotencyKeys(d.idempotency, d.clock);
  }

  /** Forgets what this instance remembers of erased or expired conversations (undefined: of every one). */
  forget(conversationIds: readonly string[] | undefined): void {
    if (conversationIds === undefined) {
      this.owners.forget();
      this.pages.clear();
    } else if (conversationIds.length > 0) {
      this.owners.forget(conversationIds);
      this.pages.forget(new Set(conversationIds));
    }
  }

  /** Stores the user's message, then streams and stores the agent's reply (none while an operator holds the conversation). */
  async *sendStream(
    caller: FrameCaller,
    input: { conversationId: string; content: string; idempotencyKey?: string },
    signal: AbortSignal,
  ): AsyncGenerator<SendEvent> {
    const content = requireContent("content", input.content);
    const keyed = this.keys.request(caller, input.idempotencyKey, "send_message", {
      conversationId: input.conversationId,
      content,
    });
    const now = this.d.clock.now();
    let conversationId: string;
    let start: NewConversation | undefined;
    let before: ConversationRecord | undefined;
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
      before = await this.frameConversation(caller, conversationId);
    }
    // A closed conversation is reopened by the customer's message (decisions §5): its watchers learn it.
    const reopens = before !== undefined && this.effectiveStatus(before) === "closed";
    const sent = await this.keys.once<{ message: MessageRecord; conversation?: ConversationRecord }>(keyed, () =>
      this.append(
        caller.accountId,
        conversationId,
        { messageId: newId(), role: "user", content, toolCalls: "", documents: [], createdAt: now },
        start,
        reopens,
        keyed,
      ),
    );
    const userMessage = sent.message;
    // A retry of a stored message (no conversation: its first answer): nothing is written again.
    const conv = sent.conversation ?? (await this.frameConversation(caller, userMessage.conversationId));
    conversationId = conv.conversationId;
    yield { type: "user_message", message: userMessage };
    if (!sent.conversation) {
      const [next] = (await this.d.conversations.messages(conv, 1, userMessage.messageOrder)).messages;
      if (next?.role === "assistant") yield { type: "reply", message: next };
      // Answered already, or followed by other messages: the agent answers only the latest.
      if (next) return;
    }

    if (conv.assignedTo !== AI_AGENT) return;
    const chatbot = (await this.d.chatbots.byId(caller.chatbotId))!;
    const history = (await this.d.conversations.recent(conv, AGENT_CONTEXT)).map((m) => ({
      role: m.role,
      content: m.content,
    }));
    try {
      for await (const ev of this.d.agent.reply(chatbot, history, signal)) {
        if (ev.type === "delta") {
          yield { type: "delta", text: ev.text };
          continue;
        }
        const { message: reply } = await this.append(caller.accountId, conversationId, {
          messageId: newId(),
          role: "assistant",
          content: ev.content,
          toolCalls: ev.toolCalls,
          documents: ev.documents,
          createdAt: this.d.clock.now(),
        });
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

  /** One page of the account's contacts with conversations. */
  async listContacts(
    caller: AccountCaller,
    input: {
      userEmailId: string;
      search: string;
      filter: string;
      /** all, mine or unassigned (views.ts); empty: all. */
      view?: string;
      limit: number | undefined;
      offset: number | undefined;
    },
  ): Promise<{ contacts: ContactView[]; hasMore: boolean }> {
    const email = requireEmail("user_email_id", input.userEmailId);
    const search = optionalText("search", input.search);
    const filter = (input.filter === "" ? "all" : input.filter) as ContactFilter;
    if (!FILTERS.includes(filter)) throw invalidArgument("filter", "must be one of all, unread, live");
    const assignee = viewAssignee(caller, input.view ?? "");
    const { limit, offset } = page(input.limit, input.offset, 10);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const liveSince = this.liveSince();
    const p = await this.d.contacts.list({
      accountId: caller.accountId,
      search: foldForSearch(search),
      filter,
      assignee,
      limit,
      offset,
      liveSince,
    });
    return {
      // Named fields, not a rest/spread copy: that copy was 4% of a list request's CPU.
      contacts: p.contacts.map(
        (c): ContactView => ({
          contactId: c.contactId,
          userId: c.userId,
          contactName: c.contactName,
          phoneNumber: c.phoneNumber,
          email: c.email,
          assignedTo: c.assignedTo,
          unreadCount: c.unreadCount,
          latestMessageAt: c.latestMessageAt,
          channels: c.channels,
          latestConversationId: c.latestConversationId,
          conversationStatus: effectiveStatus(c.latestStatus, c.latestActivityAt, liveSince),
        }),
      ),
      hasMore: p.hasMore,
    };
  }

  /** One page of a conversation's messages, for its frame user or its account, in the caller's form of it. */
  async listMessages<T>(
    caller: Caller,
    input: { conversationId: string; limit: number | undefined; offset: number | undefined },
    form: PageForm<T>,
  ): Promise<T> {
    const conversationId = requireUuid("conversation_id", input.conversationId);
    const { limit, offset } = page(input.limit, input.offset, 20);
    const owner = this.owners.get(conversationId) ?? (await this.readOwner(conversationId));
    if (
      !owner ||
      owner.accountId !== caller.accountId ||
      (caller.kind === "frame" && (owner.chatbotId !== caller.chatbotId || owner.userId !== caller.userId))
    )
      throw notFound("conversation");
    const repo = this.d.conversations;
    return this.pages.read(
      conversationId,
      offset,
      limit,
      () => repo.messageCount(conversationId),
      () => repo.messages(owner, limit, offset),
      form,
    );
  }

  /** The frame user's conversations with the token's chatbot, newest first. */
  async listFrameConversations(caller: FrameCaller): Promise<ConversationSummary[]> {
    const conversations = await this.d.conversations.forUser(caller.accountId, caller.chatbotId, caller.userId, 50);
    return conversations.map((c) => this.summary(c));
  }

  /** Moves the account's read marker to the latest message. */
  async markRead(caller: AccountCaller, conversationId: string): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    return this.change(conv, "conversation.read", (tx) => tx.conversations.markRead(conv.conversationId));
  }

  /** Assigns the conversation to an operator, shown to the customer by name; the AI agent stops answering. */
  async takeOver(
    caller: AccountCaller,
    conversationId: string,
    operatorEmail: string,
    operatorName = "",
    idempotencyKey?: string,
  ): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const operator = operatorEmail === "" ? caller.email : requireEmail("operator_email", operatorEmail);
    const name = optionalText("operator_name", operatorName, MAX_OPERATOR_NAME).trim();
    const keyed = this.keys.request(caller, idempotencyKey, "take_over", { conversationId, operator, name });
    return this.keys.once(keyed, async () => {
      if (!(await this.d.isPersonOf(caller.accountId, operator)))
        throw invalidArgument("operator_email", `${operator} is not a person of this account (invite them first)`);
      return this.change(
        conv,
        "conversation.assigned",
        (tx) =>
          tx.conversations.assign(conv.conversationId, operator, name || operator.slice(0, operator.lastIndexOf("@"))),
        keyed,
      );
    });
  }

  /** Hands the conversation back to the AI agent. */
  async release(caller: AccountCaller, conversationId: string, idempotencyKey?: string): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const keyed = this.keys.request(caller, idempotencyKey, "release", { conversationId });
    return this.keys.once(keyed, () =>
      this.change(
        conv,
        "conversation.assigned",
        (tx) => tx.conversations.assign(conv.conversationId, AI_AGENT, ""),
        keyed,
      ),
    );
  }

  /** One page of a contact's conversations, newest first. */
  async listContactConversations(
    caller: AccountCaller,
    input: { contactId: string; limit: number | undefined; offset: number | undefined },
  ): Promise<{ conversations: ConversationSummary[]; hasMore: boolean }> {
    const contactId = requireUuid("contact_id", input.contactId);
    const { limit, offset } = page(input.limit, input.offset, 10);
    // Another account's contact answers exactly as one that does not exist.
    if (!(await this.d.contacts.belongsTo(caller.accountId, contactId))) throw notFound("contact");
    const p = await this.d.conversations.forContact(contactId, limit, offset);
    return { conversations: p.conversations.map((c) => this.summary(c)), hasMore: p.hasMore };
  }

  /**
   * Follows one conversation: its state, then its messages after `afterMessageOrder` (or `afterCursor`), then each
   * change as it is committed, each message once and in order (see watch.ts). Ends when the signal aborts or the
   * events channel closes.
   */
  async *watch(
    caller: Caller,
    input: { conversationId: string; afterMessageOrder: number; afterCursor?: string },
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent> {
    const conversationId = requireUuid("conversation_id", input.conversationId);
    if (!Number.isInteger(input.afterMessageOrder) || input.afterMessageOrder < 0)
      throw invalidArgument("after_message_order", "must be an integer, 0 or more");
    const after = input.afterCursor ? parseCursor("after_cursor", input.afterCursor) : input.afterMessageOrder;
    const conv =
      caller.kind === "frame"
        ? await this.frameConversation(caller, conversationId)
        : await this.accountConversation(caller, conversationId);
    yield* this.watches.conversation(conv, this.summary(conv), after, signal, caller.kind === "account");
  }

  /** Stores an operator's reply; a closed conversation must be reopened first. */
  async reply(
    caller: AccountCaller,
    conversationId: string,
    content: string,
    idempotencyKey?: string,
  ): Promise<MessageRecord> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const text = requireContent("content", content);
    const keyed = this.keys.request(caller, idempotencyKey, "reply", { conversationId, content: text });
    const { message } = await this.keys.once(keyed, () => {
      if (this.effectiveStatus(conv) === "closed")
        throw new DomainError("failed_precondition", "the conversation is closed; reopen it before replying");
      const m: NewMessage = {
        messageId: newId(),
        role: "operator",
        content: text,
        toolCalls: "",
        documents: [],
        createdAt: this.d.clock.now(),
      };
      return this.append(caller.accountId, conv.conversationId, m, undefined, false, keyed);
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
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const keyed = this.keys.request(caller, idempotencyKey, status === "closed" ? "close" : "reopen", {
      conversationId,
    });
    // Only a change of what readers see is an event: closing a closed conversation records nothing.
    const type =
      this.effectiveStatus(conv) === status
        ? undefined
        : status === "closed"
          ? "conversation.closed"
          : "conversation.reopened";
    return this.keys.once(keyed, () =>
      this.change(
        conv,
        type,
        (tx) => tx.conversations.setStatus(conv.conversationId, status, this.d.clock.now()),
        keyed,
      ),
    );
  }

  /**
   * Follows every conversation of the account (a live inbox): changes only, from the instant it answers first, or
   * from `afterCursor` (a cursor this stream sent) to resume exactly where an earlier stream ended.
   */
  async *watchAccount(
    caller: AccountCaller,
    input: { userEmailId: string; afterCursor?: string },
    signal: AbortSignal,
  ): AsyncGenerator<AccountWatchEvent> {
    const email = requireEmail("user_email_id", input.userEmailId);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    yield* this.watches.account(caller.accountId, this.d.clock.now(), input.afterCursor ?? "", signal);
  }

  /** Appends a message and records its events in one unit of work; publishes it to watchers once committed. */
  private async append(
    accountId: string,
    conversationId: string,
    m: NewMessage,
    start?: NewConversation,
    reopens = false,
    keyed?: KeyedRequest,
  ): Promise<{ message: MessageRecord; conversation: ConversationRecord }> {
    const r = await this.d.transaction(
      async (tx) => {
        const message = await tx.conversations.append(conversationId, m, messageEffect(m.role), start);
        const conversation = (await tx.conversations.byId(conversationId))!;
        const summary = this.summary(conversation);
        const events: EventInput[] = [];
        if (start)
          events.push({
            type: "conversation.started",
            data: { conversationId, conversation: summary, chatbotId: start.chatbotId, userId: start.userId },
          });
        if (reopens) events.push({ type: "conversation.reopened", data: { conversationId, conversation: summary } });
        events.push({ type: "message.created", data: { conversationId, message } });
        await this.d.log.record(tx, accountId, events);
        // A retry with this key answers this message again, with nothing written.
        await this.keys.record(tx, keyed, { message });
        return { message, conversation };
      },
      { rowLocks: true },
    );
    this.d.log.committed();
    // Hinted after the transaction committed (the events channel waits for its fsync); watchers read the log.
    this.d.events.publish({ accountId, conversationId });
    return r;
  }

  /** Writes a change of state and its event (when `type` is given) in one unit of work, then publishes it. */
  private async change(
    conv: ConversationRecord,
    type: EventType | undefined,
    write: (tx: Repositories) => Promise<void>,
    keyed?: KeyedRequest,
  ): Promise<ConversationSummary> {
    const after = await this.d.transaction(
      async (tx) => {
        await write(tx);
        const c = (await tx.conversations.byId(conv.conversationId))!;
        if (type)
          await this.d.log.record(tx, conv.accountId, [
            { type, data: { conversationId: c.conversationId, conversation: this.summary(c) } },
          ]);
        await this.keys.record(tx, keyed, this.summary(c));
        return c;
      },
      { rowLocks: true },
    );
    if (!type) return this.summary(after);
    this.d.log.committed();
    this.d.events.publish({ accountId: after.accountId, conversationId: after.conversationId });
    return this.summary(after);
  }

  /** Reads the conversation and remembers its owner; undefined when it does not exist. */
  private async readOwner(conversationId: string): Promise<ConversationOwner | undefined> {
    const conv = await this.d.conversations.byId(conversationId);
    return conv && this.owners.remember(conv);
  }

  private async frameConversation(caller: FrameCaller, conversationId: string): Promise<ConversationRecord> {
    const conv = await this.d.conversations.byId(conversationId);
    if (
      !conv ||
      conv.accountId !== caller.accountId ||
      conv.chatbotId !== caller.chatbotId ||
      conv.userId !== caller.userId
    )
      throw notFound("conversation");
    return conv;
  }

  private async accountConversation(caller: AccountCaller, conversationId: string): Promise<ConversationRecord> {
    const conv = await this.d.conversations.byId(conversationId);
    if (!conv || conv.accountId !== caller.accountId) throw notFound("conversation");
    return conv;
  }

  private liveSince(): number {
    return this.d.clock.now() - this.d.idleCloseSeconds * 1000;
  }

  private effectiveStatus(c: ConversationRecord): "live" | "closed" {
    return effectiveStatus(c.status, c.lastMessageAt ?? c.createdAt, this.liveSince());
  }

  private summary(c: ConversationRecord): ConversationSummary {
    return {
      conversationId: c.conversationId,
      createdAt: c.createdAt,
      status: this.effectiveStatus(c),
      assignedTo: c.assignedTo,
      operatorName: c.operatorName,
      latestMessageAt: c.lastMessageAt,
      channel: c.channel,
      unreadCount: c.unreadCount,
    };
  }
}

/** user_email_id names the caller's account: by the account's e-mail, or by the calling person's own. */
function namesAccountOf(caller: AccountCaller, email: string): boolean {
  const e = email.toLowerCase();
  return e === caller.accountEmail.toLowerCase() || e === caller.email.toLowerCase();
}
