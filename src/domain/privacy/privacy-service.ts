import type { ChatbotRepository } from "../account/repository.js";
import type { AuditActor, AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import type {
  AttachmentRepository,
  ConversationRecord,
  ConversationRepository,
  MessageRecord,
  StoredFile,
} from "../conversation/repository.js";
import { invalidArgument, notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import type { RefreshTokenRecord, RefreshTokenRepository } from "../token/repository.js";
import type { Transact } from "../unit.js";
import { requireId } from "../validate.js";
import type { ContactRecord, PrivacyRepository } from "./repository.js";

/** What an erasure writes in its unit of work. */
export interface ErasureTx extends AuditTx, LogTx {
  privacy: PrivacyRepository;
}

/** Which customer: by the contact's id or by the client's user_id (exactly one). */
export interface ContactRef {
  contactId: string;
  userId: string;
}

/** What an erasure removed. */
export interface ErasureResult {
  contactId: string;
  conversations: number;
  messages: number;
  sessions: number;
  eventsRedacted: number;
}

/** Everything kept about one customer, as the export answers it. */
export interface ContactDocument {
  contact: ContactRecord;
  conversations: (ConversationRecord & { messages: MessageRecord[] })[];
  /** The files sent with those messages, with their bytes. */
  files: (StoredFile & { messageId: string })[];
  sessions: RefreshTokenRecord[];
  exportedAt: number;
}

/** Pages read while exporting: large enough to be few round trips, small enough to bound each. */
const PAGE = 200;
/** Longest retention period a chatbot may set: ten years. */
export const MAX_RETENTION_DAYS = 3650;

/**
 * Erasure and export of one customer (GDPR Art. 17 and 15/20). An erasure is one unit of work: the rows go, the
 * account's events about the customer are redacted (webhook deliveries are made from them, so pending payloads
 * are too), a `contact.erased` event (ids only) and an audit event are recorded; after the commit this instance's
 * caches forget the conversations, and other instances are told by the store (`onConversationsErased`).
 */
export class PrivacyService {
  constructor(
    private readonly d: {
      /** What finding and exporting a customer read. */
      store: AuditTx & {
        privacy: PrivacyRepository;
        chatbots: ChatbotRepository;
        conversations: ConversationRepository;
        refreshTokens: RefreshTokenRepository;
        attachments: Pick<AttachmentRepository, "ofConversations">;
      };
      transaction: Transact<ErasureTx>;
      clock: Clock;
      log: EventLog;
      audit: AuditLog;
      /** Drops the conversations from this instance's caches. */
      forget(conversationIds: readonly string[]): void;
    },
  ) {}

  /** Erases the account's customer; another account's (or an unknown one) is not_found. */
  async erase(caller: AccountCaller, ref: ContactRef): Promise<ErasureResult> {
    const contact = await this.find(caller, ref);
    const r = await this.d.transaction(async (tx) => {
      // From one millisecond after now, as every revocation: a token minted in this millisecond is refused too.
      const erased = await tx.privacy.erase(contact, this.d.clock.now() + 1);
      const result: ErasureResult = {
        contactId: contact.contactId,
        conversations: erased.conversationIds.length,
        messages: erased.messages,
        sessions: erased.sessions,
        eventsRedacted: erased.eventsRedacted,
      };
      await this.d.log.record(tx, caller.accountId, [
        { type: "contact.erased", data: { contactId: contact.contactId } },
      ]);
      await this.d.audit.record(tx, caller, "contact.erased", contact.contactId, {
        conversations: result.conversations,
        messages: result.messages,
        sessions: result.sessions,
      });
      return { result, ids: erased.conversationIds };
    });
    this.d.forget(r.ids);
    return r.result;
  }

  /** Everything kept about the account's customer, as one document. */
  async export(caller: AccountCaller, ref: ContactRef): Promise<ContactDocument> {
    const contact = await this.find(caller, ref);
    const repos = this.d.store;
    const conversations: ContactDocument["conversations"] = [];
    for (let offset = 0; ; offset += PAGE) {
      const p = await repos.conversations.forContact(contact.contactId, PAGE, offset);
      for (const c of p.conversations) {
        const messages: MessageRecord[] = [];
        for (let at = 0; ; at += PAGE) {
          const m = await repos.conversations.messages(c, PAGE, at);
          messages.push(...m.messages);
          if (!m.hasMore) break;
        }
        conversations.push({ ...c, messages });
      }
      if (!p.hasMore) break;
    }
    conversations.reverse();
    const files = await repos.attachments.ofConversations(conversations.map((c) => c.conversationId));
    const sessions: RefreshTokenRecord[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const p = await repos.refreshTokens.list({ accountId: caller.accountId, userId: contact.userId }, PAGE, offset);
      sessions.push(...p);
      if (p.length < PAGE) break;
    }
    await this.d.audit.record(repos, caller, "contact.exported", contact.contactId, {
      conversations: conversations.length,
    });
    return { contact, conversations, files, sessions, exportedAt: this.d.clock.now() };
  }

  /**
   * Deletes the conversations older than each chatbot's retention period, a batch at a time; one audit event per
   * chatbot that lost any. Run by one instance at a time (the caller holds the schedule's lock).
   */
  async runRetention(batch = 500): Promise<number> {
    let total = 0;
    for (const p of await this.d.store.privacy.retentionPolicies()) {
      const before = this.d.clock.now() - p.days * 86_400_000;
      let deleted = 0;
      for (;;) {
        const ids = await this.d.store.privacy.expireConversations(p.chatbotId, before, batch);
        this.d.forget(ids);
        deleted += ids.length;
        if (ids.length < batch) break;
      }
      if (deleted > 0) {
        const who: AuditActor = { kind: "service", accountId: p.accountId };
        await this.d.audit.record(this.d.store, who, "retention.ran", p.chatbotId, {
          conversations: deleted,
          days: p.days,
        });
      }
      total += deleted;
    }
    return total;
  }

  /** Sets (1 to MAX_RETENTION_DAYS) or clears (0) how long the account's chatbot keeps its conversations. */
  async setRetention(caller: AccountCaller, chatbotId: string, days: number): Promise<number> {
    const id = requireUuid("chatbot_id", chatbotId);
    if (!Number.isInteger(days) || days < 0 || days > MAX_RETENTION_DAYS)
      throw invalidArgument("days", `must be a whole number of days from 0 to ${MAX_RETENTION_DAYS}`);
    const c = await this.d.store.chatbots.byId(id);
    if (!c || c.accountId !== caller.accountId) throw notFound(`chatbot ${id}`);
    await this.d.store.privacy.setRetention(id, days === 0 ? null : days);
    return days;
  }

  private async find(caller: AccountCaller, ref: ContactRef): Promise<ContactRecord> {
    if ((ref.contactId === "") === (ref.userId === ""))
      throw invalidArgument("contact_id", "give a contact_id or a user_id (one of them)");
    const by = ref.contactId
      ? { contactId: requireUuid("contact_id", ref.contactId) }
      : { userId: requireId("user_id", ref.userId) };
    const c = await this.d.store.privacy.contact(caller.accountId, by);
    if (!c) throw notFound("contact");
    return c;
  }
}
