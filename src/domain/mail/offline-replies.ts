import type { ConversationRecord } from "../conversation/repository.js";
import { newId } from "../ids.js";
import type { AccountLogs, LogFollower } from "../log/account-logs.js";
import type { ConversationEvent } from "../log/events.js";
import type { EventRecord } from "../log/repository.js";
import type { ContactRecord } from "../privacy/repository.js";
import { type MailRecord, pendingMail } from "./repository.js";

/** What a reply mail carries in the outbox (no credential: the link is made when it is sent). */
export interface ReplyMailData {
  conversationId: string;
  chatbotId: string;
  userId: string;
  messageId: string;
  /** When the reply was written: a customer seen since then has read it, and is not mailed. */
  writtenAt: number;
  role: "assistant" | "operator";
  content: string;
}

/** What OfflineReplies reads and writes. */
export interface OfflineReplyDeps {
  /** The instance's shared readers of the accounts' logs: this follower takes their message.created entries. */
  logs: Pick<AccountLogs, "follow" | "onAccounts" | "quiet">;
  /** The accounts' event logs: where a log first heard of is taken up. */
  history: { lastSeq(accountId: string): Promise<number> };
  conversations: { byId(conversationId: string): Promise<ConversationRecord | undefined> };
  /** The account's contact by the client's user id. */
  contact(accountId: string, userId: string): Promise<ContactRecord | undefined>;
  outbox: { enqueue(m: MailRecord): Promise<boolean> };
  presence: { seenSince(conversationId: string, since: number): boolean };
  now(): number;
  /** How long a customer must be away after a reply before it is mailed. */
  offlineMs: number;
  /** Told that a mail was queued (the sender looks again when it is due). */
  queued?: (dueAt: number) => void;
  warn(what: string, error: unknown): void;
}

// Log entries older than the follower's start are not looked at again (they were before this process ran).
const LOOK_BACK = 200;
/** The replies it holds unread; past it, it reads the log itself, at its own pace, until it is current. */
const MAX_QUEUE = 1000;

interface Following {
  follower?: LogFollower;
  /** Waiting for the log's next entries (not considering one). */
  waiting: boolean;
}

/**
 * Follows the accounts' logs for replies (the agent's or an operator's) to a customer who is not in the
 * conversation, and queues each, due once the customer has been away for `offlineMs`, to the contact's address.
 * It is one more follower of the instance's shared reader of each account's log (account-logs.ts): the log is read
 * once for it and the account's open streams. The outbox's dedupe key (the message) makes a reply queued once
 * however many instances follow the log.
 */
export class OfflineReplies {
  private readonly cursors = new Map<string, number>();
  private readonly following = new Map<string, Following>();
  private readonly startedAt: number;
  private stopping = new AbortController();
  private unlisten: (() => void) | undefined;

  constructor(private readonly d: OfflineReplyDeps) {
    this.startedAt = d.now();
  }

  /** Starts following the accounts whose logs advance (with the server). */
  start(): void {
    if (this.unlisten) return;
    this.stopping = new AbortController();
    this.unlisten = this.d.logs.onAccounts((changes) => this.advanced(changes));
  }

  /** Stops following (the accounts' places are kept for a later start). */
  stop(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    this.stopping.abort();
  }

  /** The store's announcement that logs advanced (LogFeed): an account not followed yet is from now on. */
  advanced(changes: readonly ConversationEvent[] | undefined): void {
    // Undefined (announcements lost): the shared readers of the accounts followed read again by themselves.
    if (changes === undefined || this.stopping.signal.aborted) return;
    for (const a of new Set(changes.map((c) => c.accountId))) if (!this.following.has(a)) this.follow(a);
  }

  /** Resolves once every log followed is read and every reply in it considered (tests). */
  async idle(): Promise<void> {
    const settled = () =>
      this.d.logs.quiet && [...this.following.values()].every((s) => s.waiting && s.follower?.current === true);
    while (this.following.size > 0 && !settled()) await new Promise((r) => setTimeout(r, 5));
  }

  private follow(accountId: string): void {
    const state: Following = { waiting: false };
    this.following.set(accountId, state);
    const signal = this.stopping.signal;
    void (async () => {
      const f = await this.d.logs.follow(
        accountId,
        { accepts: (e) => e.type === "message.created", types: ["message.created"], timed: false, maxQueue: MAX_QUEUE },
        signal,
      );
      state.follower = f;
      try {
        f.start(this.cursors.get(accountId) ?? Math.max(0, (await this.d.history.lastSeq(accountId)) - LOOK_BACK));
        for (;;) {
          state.waiting = true;
          const entries = await f.next();
          state.waiting = false;
          if (!entries) return;
          for (const e of entries) {
            await this.consider(e);
            this.cursors.set(accountId, e.seq);
          }
        }
      } finally {
        f.close();
      }
    })()
      .catch((e: unknown) => this.d.warn("offline replies: reading the log failed", e))
      .finally(() => {
        if (this.following.get(accountId) === state) this.following.delete(accountId);
      });
  }

  private async consider(e: EventRecord): Promise<void> {
    const m = e.data.message;
    if (!m || (m.role !== "assistant" && m.role !== "operator") || m.content.trim() === "") return;
    if (m.createdAt < this.startedAt) return;
    if (this.d.presence.seenSince(m.conversationId, m.createdAt)) return;
    const conv = await this.d.conversations.byId(m.conversationId);
    if (!conv || conv.accountId !== e.accountId) return;
    const contact = await this.d.contact(conv.accountId, conv.userId);
    const email = contact?.email.trim().toLowerCase() ?? "";
    if (email === "") return;
    const data: ReplyMailData = {
      conversationId: conv.conversationId,
      chatbotId: conv.chatbotId,
      userId: conv.userId,
      messageId: m.messageId,
      writtenAt: m.createdAt,
      role: m.role,
      content: m.content,
    };
    const dueAt = m.createdAt + this.d.offlineMs;
    const queued = await this.d.outbox.enqueue(
      pendingMail({
        mailId: newId(),
        accountId: conv.accountId,
        kind: "reply",
        recipient: email,
        dedupeKey: `reply:${m.messageId}`,
        data: JSON.stringify(data),
        nextAttemptAt: dueAt,
        createdAt: this.d.now(),
      }),
    );
    if (queued) this.d.queued?.(dueAt);
  }
}
