import type { ChatbotRepository } from "../account/repository.js";
import type { Agent } from "../agent/agent.js";
import type { ToolApprovalRepository } from "../agent/approvals.js";
import type { AgentRepository } from "../agent/tools.js";
import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller, FrameCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { notFound } from "../errors.js";
import { IdempotencyKeys, type KeyedRequest } from "../idempotency/keys.js";
import type { IdempotencyRepository } from "../idempotency/repository.js";
import type { KnowledgeRepository } from "../knowledge/source.js";
import type { EventInput, EventLog, LogTx } from "../log/event-log.js";
import type { ConversationEvents } from "../log/events.js";
import type { EventType } from "../log/repository.js";
import type { Transact } from "../unit.js";
import { recordActivity } from "./activity.js";
import { ContactListCache } from "./contact-list-cache.js";
import type { CustomerLimits } from "./customer-limits.js";
import { type ConversationOwner, ConversationOwners, mayAccess } from "./owners.js";
import { MessagePageCache } from "./page-cache.js";
import type { ReplyRepository } from "./replies.js";
import type {
  ActivityRecord,
  ActivityRepository,
  AttachmentRepository,
  ContactRepository,
  ConversationRecord,
  ConversationRepository,
  ConversationSummary,
  MessageRecord,
  NewConversation,
  NewMessage,
  NoteRepository,
  RatingRepository,
  TimerRepository,
} from "./repository.js";
import { AI_AGENT, effectiveStatus, messageEffect } from "./rules.js";
import { type WatchDeps, Watches, type WatchTimings } from "./watch.js";

/** What the conversation use cases write in their units of work: each change goes with its events (the outbox). */
export interface ConversationTx extends LogTx, AuditTx {
  conversations: ConversationRepository;
  activities: ActivityRepository;
  notes: NoteRepository;
  ratings: RatingRepository;
  idempotency: IdempotencyRepository;
  replies: ReplyRepository;
  /** The files sent with messages (attachments.ts). */
  attachments: AttachmentRepository;
  /**
   * The conversations handed over to the team; the agent's settings, tools and the handover, read ahead of a reply
   * (Agent.prepare).
   */
  agents: Pick<AgentRepository, "setHandover" | "clearHandover" | "settings" | "tools" | "handover">;
  /** The chatbots' knowledge sources, read ahead of a reply (Agent.prepare). */
  knowledge: Pick<KnowledgeRepository, "listSources">;
  /** Tool calls waiting for a person's approval. */
  approvals: ToolApprovalRepository;
  /** Snoozes and first-response SLA clocks (timers.ts). */
  timers: TimerRepository;
}

/** What the use cases call of auto-assignment (routing.ts's Routing, which reads this room's units of work). */
export interface Router {
  /** Routes a conversation just handed over to the team. */
  route(accountId: string, conversationId: string): Promise<unknown>;
  /** Assigns the account's waiting conversations while someone can take them. */
  drain(accountId: string): Promise<unknown>;
  /** Runs a pass in the background (its failure is logged, never the caller's). */
  soon(fn: () => Promise<unknown>): void;
  /** The person's inbox is open: online until the returned function is called. */
  online(caller: AccountCaller): () => void;
}

/** What the conversation use cases need. */
export interface ConversationServiceDeps {
  contacts: ContactRepository;
  conversations: ConversationRepository;
  chatbots: ChatbotRepository;
  agent: Agent;
  /** Tool calls waiting for a person's approval (read outside units of work). */
  approvals: Pick<ToolApprovalRepository, "get" | "forConversation">;
  clock: Clock;
  idleCloseSeconds: number;
  /** Where watchers hear that the event log advanced (the store announces every append). */
  events: ConversationEvents;
  /** The event log watchers read (the store's). */
  history: WatchDeps["history"];
  /** The instance's shared readers of the accounts' logs (watch.ts makes its own when not given). */
  logs?: WatchDeps["logs"];
  /** How watchers look and how long they wait for the store (defaults in watch.ts). */
  watchTimings?: WatchTimings;
  /** The customers' ratings (read for lists). */
  ratings: Pick<RatingRepository, "forConversations">;
  /** Where keyed writes are remembered (written in each write's unit of work). */
  idempotency: Pick<IdempotencyRepository, "find">;
  /** The claims of the agent's replies (taken, renewed and released outside units of work). */
  replies: Pick<ReplyRepository, "take" | "find" | "renew" | "release">;
  /** What one customer may write (messages, conversations, ratings); undefined: no limit (AIAGENT_RATE_LIMIT=off). */
  customerLimits?: CustomerLimits | undefined;
  /** The files sent with messages, read to serve them (written in the message's unit of work). */
  attachments: Pick<AttachmentRepository, "file">;
  /** Units of work: each change and its events (the outbox) commit together. */
  transaction: Transact<ConversationTx>;
  /** The account's event log, written in the unit of work of each change. */
  log: EventLog;
  /** True when the e-mail is a person of the account (its owner or a member): only they take conversations over. */
  isPersonOf(accountId: string, email: string): Promise<boolean>;
  /** The accounts' audit log: every change of who holds a conversation is recorded in its unit of work. */
  auditLog?: AuditLog;
  /** The display name a person set in their profile ("" when none), shown to the customer when they are assigned. */
  displayNameOf?(accountId: string, email: string): Promise<string>;
  /** Auto-assignment per team (routing.ts): handovers are routed, freed capacity and new presence drain the wait. */
  router?: Router | undefined;
  /**
   * Tells the conversation's customer (their watch stream) that the AI agent is looking something up, for a reply
   * no send stream carries (after a decision on a call that waited for approval).
   */
  agentLookingUp?(conv: { accountId: string; conversationId: string }): void;
}

/**
 * What the conversation use cases share: their dependencies, this instance's caches, the keyed-write memory, and
 * the unit of work every change goes through (written with its events; the store announces them once committed).
 */
export class ConversationCore {
  /** Who each recently read conversation belongs to (immutable facts), so a page read is one query. */
  readonly owners = new ConversationOwners();
  /** Recently read pages of messages, served again while the conversation's count says they are current. */
  readonly pages = new MessagePageCache();
  /** Recently read contact list pages, served again while the account's list version says they are current. */
  readonly lists = new ContactListCache();
  readonly watches: Watches;
  readonly keys: IdempotencyKeys;

  /** Message pages answered from the page cache and built from storage, since start (the metrics). */
  get pageCacheCounts(): { readonly hits: number; readonly misses: number } {
    return this.pages.counts;
  }

  constructor(readonly d: ConversationServiceDeps) {
    this.watches = new Watches(d, d.watchTimings);
    this.keys = new IdempotencyKeys(d.idempotency, d.clock);
  }

  /** Forgets what this instance remembers of erased or expired conversations (undefined: of every one). */
  forget(conversationIds: readonly string[] | undefined): void {
    // Which pages listed the erased or expired customers is not worth tracking: erasures and retention are rare.
    if (conversationIds === undefined || conversationIds.length > 0) this.lists.clear();
    if (conversationIds === undefined) {
      this.owners.forget();
      this.pages.clear();
    } else if (conversationIds.length > 0) {
      this.owners.forget(conversationIds);
      this.pages.forget(new Set(conversationIds));
    }
  }

  /**
   * Appends a message and records its events in one unit of work (the store announces them once committed). With
   * `context`, when the AI agent answers the conversation, its latest `context` messages (the agent's history, this
   * one included) are read in the same unit and answered once it committed: a back end may send that read with the
   * commit. The conversation's row stays locked to the commit, so no other message can come between. `inUnit` writes
   * what goes with the message in its unit (a throw rolls the message back).
   */
  async append(
    accountId: string,
    conversationId: string,
    m: NewMessage,
    start?: NewConversation,
    reopens = false,
    keyed?: KeyedRequest,
    context = 0,
    inUnit?: (tx: ConversationTx, message: MessageRecord, conversation: ConversationRecord) => Promise<void>,
  ): Promise<{ message: MessageRecord; conversation: ConversationRecord; recent?: Promise<MessageRecord[]> }> {
    const r = await this.d.transaction(
      async (tx) => {
        const { message, conversation } = await tx.conversations.appendAndRead(
          conversationId,
          m,
          messageEffect(m.role),
          start,
        );
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
        // The timeline: the customer writing into a closed conversation reopened it.
        if (reopens)
          await recordActivity(tx, this.d.log, {
            accountId,
            conversationId,
            kind: "reopened",
            actorEmail: "",
            actorName: "Customer",
            fromEmail: "",
            fromName: "",
            toEmail: "",
            toName: "",
            detail: "",
            createdAt: m.createdAt,
          });
        // The customer writing wakes a snoozed conversation.
        if (m.role === "user" && !start && (await tx.timers.wake(conversationId, null)))
          await recordActivity(tx, this.d.log, {
            accountId,
            conversationId,
            kind: "unsnoozed",
            actorEmail: "",
            actorName: "Customer",
            fromEmail: "",
            fromName: "",
            toEmail: "",
            toName: "",
            detail: "customer",
            createdAt: m.createdAt,
          });
        // A retry with this key answers this message again, with nothing written.
        await this.keys.record(tx, keyed, { message });
        // What else goes with the message (the claim of its reply, or the claim a reply completes).
        await inUnit?.(tx, message, conversation);
        // Not waited for here: the unit's commit is what it goes with.
        const recent =
          context > 0 && conversation.assignedTo === AI_AGENT
            ? tx.conversations.recent(conversation, context)
            : undefined;
        // Should the unit fail, nobody waits for it: its failure is the unit's.
        recent?.catch(() => undefined);
        return { message, conversation, ...(recent ? { recent } : {}) };
      },
      { rowLocks: true },
    );
    return r;
  }

  /**
   * Writes a change of state and its event (when `type` is given) in one unit of work, then its timeline line
   * (when `line` is given: its conversation.activity event follows the change's own).
   */
  async change(
    conv: ConversationRecord,
    type: EventType | undefined,
    write: (tx: ConversationTx) => Promise<void>,
    keyed?: KeyedRequest,
    line?: Omit<ActivityRecord, "activityId">,
  ): Promise<ConversationSummary> {
    const after = await this.d.transaction(
      async (tx) => {
        await write(tx);
        const c = (await tx.conversations.byId(conv.conversationId))!;
        if (type)
          await this.d.log.record(tx, conv.accountId, [
            { type, data: { conversationId: c.conversationId, conversation: this.summary(c) } },
          ]);
        if (line) await recordActivity(tx, this.d.log, line);
        await this.keys.record(tx, keyed, this.summary(c));
        return c;
      },
      { rowLocks: true },
    );
    return this.summary(after);
  }

  /** Reads the conversation and remembers its owner; undefined when it does not exist. */
  async readOwner(conversationId: string): Promise<ConversationOwner | undefined> {
    const conv = await this.d.conversations.byId(conversationId);
    return conv && this.owners.remember(conv);
  }

  async frameConversation(caller: FrameCaller, conversationId: string): Promise<ConversationRecord> {
    const conv = await this.d.conversations.byId(conversationId);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return conv;
  }

  async accountConversation(caller: AccountCaller, conversationId: string): Promise<ConversationRecord> {
    const conv = await this.d.conversations.byId(conversationId);
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return conv;
  }

  liveSince(): number {
    return this.d.clock.now() - this.d.idleCloseSeconds * 1000;
  }

  effectiveStatus(c: ConversationRecord): "live" | "closed" {
    return effectiveStatus(c.status, c.lastMessageAt ?? c.createdAt, this.liveSince());
  }

  summary(c: ConversationRecord): ConversationSummary {
    return summarize(c, this.liveSince());
  }
}

/** A conversation as readers see it: idle since before `liveSince`, it reads closed. */
export function summarize(c: ConversationRecord, liveSince: number): ConversationSummary {
  return {
    conversationId: c.conversationId,
    createdAt: c.createdAt,
    status: effectiveStatus(c.status, c.lastMessageAt ?? c.createdAt, liveSince),
    assignedTo: c.assignedTo,
    operatorName: c.operatorName,
    latestMessageAt: c.lastMessageAt,
    channel: c.channel,
    unreadCount: c.unreadCount,
  };
}

/** user_email_id names the caller's account: by the account's e-mail, or by the calling person's own. */
export function namesAccountOf(caller: AccountCaller, email: string): boolean {
  // The same text (what the console sends) needs no case folding.
  if (email === caller.accountEmail || email === caller.email) return true;
  const e = email.toLowerCase();
  return e === caller.accountEmail.toLowerCase() || e === caller.email.toLowerCase();
}
