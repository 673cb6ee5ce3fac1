import type { ChatbotRepository } from "../account/repository.js";
import { type Agent, AgentUnavailableError } from "../agent/agent.js";
import type { AccountCaller, Caller, FrameCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound, permissionDenied } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { Repositories, Transact } from "../store.js";
import { optionalText, page, requireContent, requireEmail } from "../validate.js";
import type { EventInput, EventLog } from "../webhook/event-log.js";
import type { EventType } from "../webhook/repository.js";
import type { ConversationEvent, ConversationEvents, ConversationSummary, EventListener } from "./events.js";
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

export type { AccountCaller, Caller, FrameCaller } from "../caller.js";
export type { ConversationSummary } from "./events.js";
export { AI_AGENT } from "./rules.js";

/** An event of a streamed send. */
export type SendEvent =
  | { type: "user_message"; message: MessageRecord }
  | { type: "delta"; text: string }
  | { type: "reply"; message: MessageRecord };

/** The channel of conversations started in the frame. */
export const WEB_CHANNEL = "web";
const FILTERS: readonly ContactFilter[] = ["all", "unread", "live"];
const MAX_OPERATOR_NAME = 80;
const WATCH_PAGE = 100;
const MAX_QUEUED_EVENTS = 1000;

/** An event of a watched conversation. */
export type WatchEvent =
  | { type: "conversation"; conversation: ConversationSummary }
  | { type: "message"; message: MessageRecord };

/** An event of a watched account: first `subscribed`, then its conversations' events. */
export type AccountWatchEvent = { type: "subscribed"; at: number } | WatchEvent;
const AGENT_CONTEXT = 20;

/** What the conversation use cases need. */
export interface ConversationServiceDeps {
  contacts: ContactRepository;
  conversations: ConversationRepository;
  chatbots: ChatbotRepository;
  agent: Agent;
  clock: Clock;
  idleCloseSeconds: number;
  /** Where committed changes are published for watchers. */
  events: ConversationEvents;
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

  /** Message pages answered from the page cache and built from storage, since start (the metrics). */
  get pageCacheCounts(): { readonly hits: number; readonly misses: number } {
    return this.pages.counts;
  }

  constructor(private readonly d: ConversationServiceDeps) {}

  /** Stores the user's message, then streams and stores the agent's reply (none while an operator holds the conversation). */
  async *sendStream(
    caller: FrameCaller,
    input: { conversationId: string; content: string },
    signal: AbortSignal,
  ): AsyncGenerator<SendEvent> {
    const content = requireContent("content", input.content);
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
    const { message: userMessage, conversation: conv } = await this.append(
      caller.accountId,
      conversationId,
      { messageId: newId(), role: "user", content, toolCalls: "", documents: [], createdAt: now },
      start,
      reopens,
    );
    if (reopens) this.publishState(conv);
    yield { type: "user_message", message: userMessage };

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
    input: { conversationId: string; content: string },
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
      limit: number | undefined;
      offset: number | undefined;
    },
  ): Promise<{ contacts: ContactView[]; hasMore: boolean }> {
    const email = requireEmail("user_email_id", input.userEmailId);
    const search = optionalText("search", input.search);
    const filter = (input.filter === "" ? "all" : input.filter) as ContactFilter;
    if (!FILTERS.includes(filter)) throw invalidArgument("filter", "must be one of all, unread, live");
    const { limit, offset } = page(input.limit, input.offset, 10);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const liveSince = this.liveSince();
    const p = await this.d.contacts.list({
      accountId: caller.accountId,
      search: foldForSearch(search),
      filter,
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
  ): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const operator = operatorEmail === "" ? caller.email : requireEmail("operator_email", operatorEmail);
    if (!(await this.d.isPersonOf(caller.accountId, operator)))
      throw invalidArgument("operator_email", `${operator} is not a person of this account (invite them first)`);
    const name = optionalText("operator_name", operatorName, MAX_OPERATOR_NAME).trim();
    return this.change(conv, "conversation.assigned", (tx) =>
      tx.conversations.assign(conv.conversationId, operator, name || operator.slice(0, operator.lastIndexOf("@"))),
    );
  }

  /** Hands the conversation back to the AI agent. */
  async release(caller: AccountCaller, conversationId: string): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    return this.change(conv, "conversation.assigned", (tx) =>
      tx.conversations.assign(conv.conversationId, AI_AGENT, ""),
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
   * Follows one conversation: its state, then its messages after `afterMessageOrder`, then each change as it is
   * committed, each message once and in order. Ends when the signal aborts or the events channel closes.
   */
  async *watch(
    caller: Caller,
    input: { conversationId: string; afterMessageOrder: number },
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent> {
    const conversationId = requireUuid("conversation_id", input.conversationId);
    if (!Number.isInteger(input.afterMessageOrder) || input.afterMessageOrder < 0)
      throw invalidArgument("after_message_order", "must be an integer, 0 or more");
    const conv =
      caller.kind === "frame"
        ? await this.frameConversation(caller, conversationId)
        : await this.accountConversation(caller, conversationId);
    // Subscribe before reading, so nothing committed between the read and the subscription is lost; what the
    // read already gave is skipped by its message_order.
    const inbox = new EventInbox(signal);
    const unsubscribe = this.d.events.subscribe({ conversationId }, inbox);
    try {
      yield { type: "conversation", conversation: this.summary(conv) };
      let last = input.afterMessageOrder;
      for (;;) {
        const p = await this.d.conversations.messages(conv, WATCH_PAGE, last);
        for (const m of p.messages) {
          last = m.messageOrder;
          yield { type: "message", message: m };
        }
        if (!p.hasMore) break;
      }
      for (;;) {
        const e = await inbox.next();
        if (e === undefined) return;
        if (e.type === "message") {
          if (e.message.messageOrder <= last) continue;
          last = e.message.messageOrder;
          yield { type: "message", message: e.message };
        } else yield { type: "conversation", conversation: e.conversation };
      }
    } finally {
      unsubscribe();
      inbox.dispose();
    }
  }

  /** Stores an operator's reply; a closed conversation must be reopened first. */
  async reply(caller: AccountCaller, conversationId: string, content: string): Promise<MessageRecord> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    const text = requireContent("content", content);
    if (this.effectiveStatus(conv) === "closed")
      throw new DomainError("failed_precondition", "the conversation is closed; reopen it before replying");
    const { message } = await this.append(caller.accountId, conv.conversationId, {
      messageId: newId(),
      role: "operator",
      content: text,
      toolCalls: "",
      documents: [],
      createdAt: this.d.clock.now(),
    });
    return message;
  }

  /** Closes or reopens a conversation. */
  async setStatus(
    caller: AccountCaller,
    conversationId: string,
    status: "live" | "closed",
  ): Promise<ConversationSummary> {
    const conv = await this.accountConversation(caller, requireUuid("conversation_id", conversationId));
    // Only a change of what readers see is an event: closing a closed conversation records nothing.
    const type =
      this.effectiveStatus(conv) === status
        ? undefined
        : status === "closed"
          ? "conversation.closed"
          : "conversation.reopened";
    return this.change(conv, type, (tx) => tx.conversations.setStatus(conv.conversationId, status, this.d.clock.now()));
  }

  /** Follows every conversation of the account (a live inbox): changes only, from the instant it answers first. */
  async *watchAccount(
    caller: AccountCaller,
    input: { userEmailId: string },
    signal: AbortSignal,
  ): AsyncGenerator<AccountWatchEvent> {
    const email = requireEmail("user_email_id", input.userEmailId);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const inbox = new EventInbox(signal);
    const unsubscribe = this.d.events.subscribe({ accountId: caller.accountId }, inbox);
    try {
      yield { type: "subscribed", at: this.d.clock.now() };
      for (;;) {
        const e = await inbox.next();
        if (e === undefined) return;
        if (e.type === "message") yield { type: "message", message: e.message };
        else yield { type: "conversation", conversation: e.conversation };
      }
    } finally {
      unsubscribe();
      inbox.dispose();
    }
  }

  /** Appends a message and records its events in one unit of work; publishes it to watchers once committed. */
  private async append(
    accountId: string,
    conversationId: string,
    m: NewMessage,
    start?: NewConversation,
    reopens = false,
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
        return { message, conversation };
      },
      { rowLocks: true },
    );
    this.d.log.committed();
    // Published after the transaction committed; the events channel waits for its fsync.
    this.d.events.publish({ type: "message", accountId, conversationId, message: r.message });
    return r;
  }

  /** Writes a change of state and its event (when `type` is given) in one unit of work, then publishes it. */
  private async change(
    conv: ConversationRecord,
    type: EventType | undefined,
    write: (tx: Repositories) => Promise<void>,
  ): Promise<ConversationSummary> {
    const after = await this.d.transaction(
      async (tx) => {
        await write(tx);
        const c = (await tx.conversations.byId(conv.conversationId))!;
        if (type)
          await this.d.log.record(tx, conv.accountId, [
            { type, data: { conversationId: c.conversationId, conversation: this.summary(c) } },
          ]);
        return c;
      },
      { rowLocks: true },
    );
    if (type) this.d.log.committed();
    return this.publishState(after);
  }

  private publishState(c: ConversationRecord): ConversationSummary {
    const conversation = this.summary(c);
    this.d.events.publish({
      type: "conversation",
      accountId: c.accountId,
      conversationId: c.conversationId,
      conversation,
    });
    return conversation;
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

/** Events of one subscription, queued until the watcher takes them; a watcher that falls far behind is ended. */
class EventInbox implements EventListener {
  private readonly queue: ConversationEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private overflowed = false;
  private readonly onAbort = () => this.closed();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  event(e: ConversationEvent): void {
    if (this.ended) return;
    if (this.queue.length >= MAX_QUEUED_EVENTS) {
      // The client reads slower than the conversation changes: end its stream; it resumes from what it has.
      this.overflowed = true;
      this.closed();
      return;
    }
    this.queue.push(e);
    this.wake?.();
  }

  closed(): void {
    this.ended = true;
    this.wake?.();
  }

  /** The next event; undefined once the stream should end. */
  async next(): Promise<ConversationEvent | undefined> {
    for (;;) {
      if (this.overflowed)
        throw new DomainError("resource_exhausted", "the watcher fell behind; resume from the last message_order");
      const e = this.queue.shift();
      if (e) return e;
      if (this.ended || this.signal.aborted) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  dispose(): void {
    this.signal.removeEventListener("abort", this.onAbort);
  }
}

/** user_email_id names the caller's account: by the account's e-mail, or by the calling person's own. */
function namesAccountOf(caller: AccountCaller, email: string): boolean {
  const e = email.toLowerCase();
  return e === caller.accountEmail.toLowerCase() || e === caller.email.toLowerCase();
}
