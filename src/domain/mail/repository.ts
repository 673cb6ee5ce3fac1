/** What a queued mail is for; each kind composes its own message when it is sent (mailer.ts). */
export type MailKind = "reply" | "invitation" | "transcript" | "mention" | "sla_alert";

/** Where a queued mail stands. */
export type MailStatus = "pending" | "sent" | "failed" | "cancelled";

/**
 * A mail in the outbox. It holds no credential: a reply's link (a launch code) and every mail's unsubscribe token
 * are made when it is sent, and only the unsubscribe token's hash is kept; what a kind needs beyond the recipient
 * is in `data` (JSON), sealed by the caller where it is a secret (an invitation's link).
 */
export interface MailRecord {
  mailId: string;
  accountId: string;
  kind: MailKind;
  /** Lower case. */
  recipient: string;
  /** Unique per account: the same mail queued twice (two instances, a retried unit) is queued once. */
  dedupeKey: string;
  data: string;
  status: MailStatus;
  attempts: number;
  /** The last failure's reason ("" while none failed). */
  lastError: string;
  /** When the next attempt is due; null once sent, failed for good or cancelled. */
  nextAttemptAt: number | null;
  /** When it was last tried (null before the first attempt). */
  lastAttemptAt: number | null;
  createdAt: number;
  sentAt: number | null;
  /** The hash of the unsubscribe token of the last attempt ("" before the first). */
  unsubscribeHash: string;
  /** When the recipient unsubscribed through this mail's link; null while they have not. */
  unsubscribedAt: number | null;
}

/** A mail as it is first queued: pending, due at `nextAttemptAt`, never tried. */
export function pendingMail(
  m: Pick<MailRecord, "mailId" | "accountId" | "kind" | "recipient" | "dedupeKey" | "data" | "createdAt"> & {
    nextAttemptAt: number;
  },
): MailRecord {
  return {
    ...m,
    status: "pending",
    attempts: 0,
    lastError: "",
    lastAttemptAt: null,
    sentAt: null,
    unsubscribeHash: "",
    unsubscribedAt: null,
  };
}

/** What the outbox holds for one account, for its people (and the service's for the readiness probe). */
export interface MailCounts {
  pending: number;
  failed: number;
  /** The latest failed attempt's reason and instant, "" and null when none failed. */
  lastError: string;
  lastErrorAt: number | null;
}

/** The outbox of e-mails, shared by every instance (a due mail is leased to one sender at a time). */
export interface MailRepository {
  /**
   * Queues the mail; false (nothing queued) when the account queued one with the same dedupe key before, or when
   * the recipient unsubscribed from the account's mail.
   */
  enqueue(m: MailRecord): Promise<boolean>;
  /**
   * Takes up to `limit` pending mails due at `now`, oldest first, and moves their next attempt to `leaseUntil` so
   * that no other sender takes them meanwhile; each attempt is counted here.
   */
  claim(now: number, leaseUntil: number, limit: number): Promise<MailRecord[]>;
  /** Keeps the hash of the unsubscribe token the attempt is about to send. */
  setUnsubscribeHash(mailId: string, hash: string): Promise<void>;
  /** The relay accepted it. */
  markSent(mailId: string, at: number): Promise<void>;
  /** An attempt failed: tried again at nextAttemptAt, or failed for good when it is null. */
  markFailed(mailId: string, error: string, at: number, nextAttemptAt: number | null): Promise<void>;
  /** It should not be sent any more (the customer came back, the conversation is gone): cancelled, with why. */
  cancel(mailId: string, reason: string, at: number): Promise<void>;
  /**
   * The recipient of the mail whose unsubscribe token hashes to `hash` unsubscribes from its account's mail; their
   * mails still pending are cancelled. Undefined when no mail has that hash.
   */
  unsubscribe(hash: string, at: number): Promise<{ accountId: string; recipient: string } | undefined>;
  /** Whether the recipient unsubscribed from the account's mail. */
  unsubscribed(accountId: string, recipient: string): Promise<boolean>;
  /** The account's outbox (every account's when accountId is undefined). */
  counts(accountId: string | undefined): Promise<MailCounts>;
  /** One mail, the account's own. */
  get(accountId: string, mailId: string): Promise<MailRecord | undefined>;
}
