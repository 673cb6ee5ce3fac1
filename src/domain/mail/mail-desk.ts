import { LOCALES, type Locale, localeOf } from "../account/languages.js";
import type { AccountCaller, Caller, FrameCaller } from "../caller.js";
import type { WriteCounter } from "../conversation/customer-limits.js";
import { mayAccess } from "../conversation/owners.js";
import type { ContactProfile, ConversationRecord } from "../conversation/repository.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { ContactRecord } from "../privacy/repository.js";
import { requireEmail } from "../validate.js";
import { type MailCounts, type MailRecord, pendingMail } from "./repository.js";

/** What a transcript mail carries in the outbox: the conversation (its messages are read when it is sent). */
export interface TranscriptMailData {
  conversationId: string;
  /** Who asked: the customer from the frame, or a person of the account (their e-mail). */
  requestedBy: "customer" | { email: string };
  /** The language of its words and dates, as asked (the frame's); absent: the chatbot's default. */
  locale?: Locale;
}

export interface MailDeskDeps {
  contacts: { upsert(accountId: string, userId: string, p: ContactProfile, now: number): Promise<string> };
  /** The account's contact by the client's user id. */
  contact(accountId: string, userId: string): Promise<ContactRecord | undefined>;
  conversations: { byId(conversationId: string): Promise<ConversationRecord | undefined> };
  outbox: { enqueue(m: MailRecord): Promise<boolean>; counts(accountId: string): Promise<MailCounts> };
  /** Transcripts per conversation (the limit's counter: resolves to the seconds to wait once over it). */
  transcripts: WriteCounter;
  transcriptsPerHour: number;
  /** Whether the service has a relay: without one nothing is queued. */
  relay: boolean;
  now(): number;
  /** Told that a mail was queued (the sender looks at once). */
  queued?: () => void;
}

/** How the account's outbox stands, for its admins. */
export interface MailStatusView extends MailCounts {
  relayConfigured: boolean;
}

/** A mailbox: one @, a domain with a dot, no blanks (stricter than an account e-mail, which may be a bare name). */
const MAILBOX = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/**
 * What the customer and the account's people ask of e-mail: the customer's own address (only the contact their
 * token names), a transcript of a conversation to its contact's address (queued in the outbox, counted per
 * conversation), and the account's outbox for its admins.
 */
export class MailDesk {
  constructor(private readonly d: MailDeskDeps) {}

  /** The frame user's own address ("" when none). */
  async frameContact(caller: FrameCaller): Promise<{ email: string }> {
    return { email: (await this.d.contact(caller.accountId, caller.userId))?.email ?? "" };
  }

  /** Stores the address the frame user left on their own contact. */
  async setFrameEmail(caller: FrameCaller, email: string): Promise<{ email: string }> {
    if (email === "") throw invalidArgument("email", "is required");
    requireEmail("email", email);
    if (!MAILBOX.test(email)) throw invalidArgument("email", "must be an e-mail address like name@example.com");
    await this.d.contacts.upsert(
      caller.accountId,
      caller.userId,
      { contactName: "", email, phoneNumber: "" },
      this.d.now(),
    );
    return { email };
  }

  /**
   * Queues the conversation's transcript to its contact's address. Another's conversation answers as one that does
   * not exist; nothing is counted or queued before the caller is known to see it.
   */
  async sendTranscript(
    caller: Caller,
    conversationId: string,
    locale?: string,
  ): Promise<{ recipient: string; mailId: string }> {
    const language = locale === undefined || locale === "" ? undefined : localeOf(locale);
    if (locale !== undefined && locale !== "" && (language === undefined || language !== locale))
      throw invalidArgument("locale", `must be one of ${LOCALES.join(", ")}`);
    const conv = await this.d.conversations.byId(requireUuid("conversation_id", conversationId));
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    if (!this.d.relay)
      throw new DomainError("failed_precondition", "e-mail is not set up on this service (no SMTP relay)");
    const contact = await this.d.contact(conv.accountId, conv.userId);
    const recipient = contact?.email ?? "";
    if (recipient === "")
      throw new DomainError("failed_precondition", "the contact has no e-mail address to send the transcript to", {
        field: "email",
      });
    const wait = await this.d.transcripts.hit(conversationId);
    if (wait)
      throw new DomainError(
        "resource_exhausted",
        `at most ${this.d.transcriptsPerHour} transcripts an hour per conversation; retry after ${wait} s`,
        { retryAfterSeconds: wait },
      );
    const mailId = newId();
    const now = this.d.now();
    const data: TranscriptMailData = {
      conversationId,
      requestedBy: caller.kind === "frame" ? "customer" : { email: caller.email },
      ...(language ? { locale: language } : {}),
    };
    const queued = await this.d.outbox.enqueue(
      pendingMail({
        mailId,
        accountId: conv.accountId,
        kind: "transcript",
        recipient: recipient.toLowerCase(),
        dedupeKey: `transcript:${mailId}`,
        data: JSON.stringify(data),
        nextAttemptAt: now,
        createdAt: now,
      }),
    );
    if (!queued)
      throw new DomainError("failed_precondition", "this address unsubscribed from our e-mail; nothing was sent");
    this.d.queued?.();
    return { recipient, mailId };
  }

  /** The account's outbox: mails waiting, failed for good, and the latest failure. */
  async status(caller: AccountCaller): Promise<MailStatusView> {
    const c = await this.d.outbox.counts(caller.accountId);
    return { relayConfigured: this.d.relay, ...c };
  }
}
