import type { MailCounts, MailKind, MailRecord, MailStatus } from "../domain/mail/repository.js";

/** A row of `mail_outbox`. */
export interface MailRow {
  mail_id: string;
  account_id: string;
  kind: string;
  recipient: string;
  dedupe_key: string;
  data: string;
  status: string;
  attempts: number;
  last_error: string;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  created_at: number;
  sent_at: number | null;
  unsubscribe_hash: string;
  unsubscribed_at: number | null;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const toMail = (r: MailRow): MailRecord => ({
  mailId: r.mail_id,
  accountId: r.account_id,
  kind: r.kind as MailKind,
  recipient: r.recipient,
  dedupeKey: r.dedupe_key,
  data: r.data,
  status: r.status as MailStatus,
  attempts: Number(r.attempts),
  lastError: r.last_error,
  nextAttemptAt: num(r.next_attempt_at),
  lastAttemptAt: num(r.last_attempt_at),
  createdAt: Number(r.created_at),
  sentAt: num(r.sent_at),
  unsubscribeHash: r.unsubscribe_hash,
  unsubscribedAt: num(r.unsubscribed_at),
});

/** The columns of an insert, in the order of MAIL_COLUMNS. */
export const mailValues = (m: MailRecord) =>
  [
    m.mailId,
    m.accountId,
    m.kind,
    m.recipient,
    m.dedupeKey,
    m.data,
    m.status,
    m.attempts,
    m.lastError,
    m.nextAttemptAt,
    m.lastAttemptAt,
    m.createdAt,
    m.sentAt,
    m.unsubscribeHash,
    m.unsubscribedAt,
  ] as const;

export const MAIL_COLUMNS =
  "mail_id, account_id, kind, recipient, dedupe_key, data, status, attempts, last_error, next_attempt_at, " +
  "last_attempt_at, created_at, sent_at, unsubscribe_hash, unsubscribed_at";

/** The counts' row: pending and failed mails, and the latest failed attempt. */
export interface MailCountRow {
  pending: number | string | null;
  failed: number | string | null;
  last_error: string | null;
  last_error_at: number | string | null;
}

export const toMailCounts = (r: MailCountRow | undefined): MailCounts => ({
  pending: Number(r?.pending ?? 0),
  failed: Number(r?.failed ?? 0),
  lastError: r?.last_error ?? "",
  lastErrorAt: r?.last_error_at === null || r?.last_error_at === undefined ? null : Number(r.last_error_at),
});

/** Pending and failed mails, and the reason of the latest failed attempt of a mail not sent since. */
export const countsSql = (where: string) =>
  `SELECT
     (SELECT count(*) FROM mail_outbox WHERE status = 'pending'${where}) AS pending,
     (SELECT count(*) FROM mail_outbox WHERE status = 'failed'${where}) AS failed,
     (SELECT last_error FROM mail_outbox WHERE ${FAILING}${where} ORDER BY last_attempt_at DESC LIMIT 1) AS last_error,
     (SELECT last_attempt_at FROM mail_outbox WHERE ${FAILING}${where} ORDER BY last_attempt_at DESC LIMIT 1)
       AS last_error_at`;

// A mail whose last attempt failed and that is not sent since.
const FAILING = "last_error <> '' AND status IN ('pending', 'failed')";
