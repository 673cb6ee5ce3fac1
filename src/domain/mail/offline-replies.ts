import type { ConversationRecord } from "../conversation/repository.js";
import { newId } from "../ids.js";
import type { ConversationEvent } from "../log/events.js";
import type { EventRecord } from "../log/repository.js";
import type { ContactRecord } from "../privacy/repository.js";
import type { MailRecord } from "./repository.js";

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
  /** The accounts' event logs (message.created). */
  history: {
    list(accountId: string, afterSeq: number, limit: number, types: readonly string[]): Promise<EventRecord[]>;
    lastSeq(accountId: string): Promise<number>;
  };
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

const PAGE = 100;
// Log entries older than the follower's start are not looked at again (they were before this process ran).
const LOOK_BACK = 200;

/**
 * Follows the accounts' logs for replies (the agent's or an operator's) to a customer who is not in the
 * conversation, and queues each, due once the customer has been away for `offlineMs`, to the contact's address.
 * The outbox's dedupe key (the message) makes a reply queued once however many instances follow the log.
 */
export class OfflineReplies {
  private readonly cursors = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly startedAt: number;

  constructor(private readonly d: OfflineReplyDeps) {
    this.startedAt = d.now();
  }

  /** The store's announcement that logs advanced (LogFeed). */
  advanced(changes: readonly ConversationEvent[] | undefined): void {
    const accounts = changes === undefined ? [...this.cursors.keys()] : [...new Set(changes.map((c) => c.accountId))];
    for (const a of accounts) this.follow(a);
  }

  /** Resolves once every account's log read so far is done (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()]);
  }

  private follow(accountId: string): void {
    if (this.running.has(accountId)) {
      this.again.add(accountId);
      return;
    }
    const run = this.read(accountId)
      .catch((e: unknown) => this.d.warn("offline replies: reading the log failed", e))
      .finally(() => {
        this.running.delete(accountId);
        if (this.again.delete(accountId)) this.follow(accountId);
      });
    this.running.set(accountId, run);
  }

  private async read(accountId: string): Promise<void> {
    let seq = this.cursors.get(accountId);
    if (seq === undefined) seq = Math.max(0, (await this.d.history.lastSeq(accountId)) - LOOK_BACK);
    for (;;) {
      const page = await this.d.history.list(accountId, seq, PAGE, ["message.created"]);
      for (const e of page) {
        await this.consider(e);
        seq = e.seq;
        this.cursors.set(accountId, seq);
      }
      if (page.length < PAGE) break;
    }
    this.cursors.set(accountId, seq);
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
    const queued = await this.d.outbox.enqueue({
      mailId: newId(),
      accountId: conv.accountId,
      kind: "reply",
      recipient: email,
      dedupeKey: `reply:${m.messageId}`,
      data: JSON.stringify(data),
      status: "pending",
      attempts: 0,
      lastError: "",
      nextAttemptAt: dueAt,
      lastAttemptAt: null,
      createdAt: this.d.now(),
      sentAt: null,
      unsubscribeHash: "",
      unsubscribedAt: null,
    });
    if (queued) this.d.queued?.(dueAt);
  }
}
