import type { MailRepository } from "../../../domain/mail/repository.js";
import {
  countsSql,
  MAIL_COLUMNS,
  type MailCountRow,
  type MailRow,
  mailValues,
  toMail,
  toMailCounts,
} from "../../mail-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** The e-mail outbox in SQLite. */
export function sqliteMail(db: Db): Sync<MailRepository> {
  const stopped = db.prepare<[string, string], { n: number }>(
    "SELECT 1 AS n FROM mail_outbox WHERE account_id = ? AND recipient = ? AND unsubscribed_at IS NOT NULL LIMIT 1",
  );
  const insert = db.prepare(
    `INSERT INTO mail_outbox (${MAIL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (account_id, dedupe_key) DO NOTHING`,
  );
  const due = db.prepare<[number, number], MailRow>(
    `SELECT * FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, created_at
     LIMIT ?`,
  );
  const lease = db.prepare(
    "UPDATE mail_outbox SET next_attempt_at = ?, attempts = attempts + 1, last_attempt_at = ? WHERE mail_id = ?",
  );
  const setHash = db.prepare("UPDATE mail_outbox SET unsubscribe_hash = ? WHERE mail_id = ?");
  const sent = db.prepare(
    "UPDATE mail_outbox SET status = 'sent', sent_at = ?, next_attempt_at = NULL WHERE mail_id = ? AND status = 'pending'",
  );
  const failed = db.prepare(
    `UPDATE mail_outbox SET status = ?, last_error = ?, last_attempt_at = ?, next_attempt_at = ?
     WHERE mail_id = ? AND status = 'pending'`,
  );
  const cancelOne = db.prepare(
    `UPDATE mail_outbox SET status = 'cancelled', last_error = ?, last_attempt_at = ?, next_attempt_at = NULL
     WHERE mail_id = ? AND status = 'pending'`,
  );
  const byHash = db.prepare<[string], MailRow>("SELECT * FROM mail_outbox WHERE unsubscribe_hash = ?");
  const markUnsubscribed = db.prepare(
    "UPDATE mail_outbox SET unsubscribed_at = coalesce(unsubscribed_at, ?) WHERE mail_id = ?",
  );
  const cancel = db.prepare(
    `UPDATE mail_outbox SET status = 'cancelled', next_attempt_at = NULL
     WHERE account_id = ? AND recipient = ? AND status = 'pending'`,
  );
  const countAll = db.prepare<[], MailCountRow>(countsSql(""));
  const countOne = db.prepare<[string, string, string, string], MailCountRow>(countsSql(" AND account_id = ?"));
  const one = db.prepare<[string, string], MailRow>("SELECT * FROM mail_outbox WHERE account_id = ? AND mail_id = ?");
  const claim = db.transaction((now: number, leaseUntil: number, limit: number) => {
    const rows = due.all(now, limit);
    for (const r of rows) lease.run(leaseUntil, now, r.mail_id);
    return rows.map((r) => ({ ...toMail(r), attempts: r.attempts + 1, nextAttemptAt: leaseUntil, lastAttemptAt: now }));
  });
  const unsubscribe = db.transaction((hash: string, at: number) => {
    const r = byHash.get(hash);
    if (!r) return undefined;
    markUnsubscribed.run(at, r.mail_id);
    cancel.run(r.account_id, r.recipient);
    return { accountId: r.account_id, recipient: r.recipient };
  });
  return {
    enqueue: (m) => {
      if (stopped.get(m.accountId, m.recipient)) return false;
      return insert.run(...mailValues(m)).changes === 1;
    },
    claim: (now, leaseUntil, limit) => claim(now, leaseUntil, limit),
    setUnsubscribeHash: (mailId, hash) => void setHash.run(hash, mailId),
    markSent: (mailId, at) => void sent.run(at, mailId),
    markFailed: (mailId, error, at, next) =>
      void failed.run(next === null ? "failed" : "pending", error, at, next, mailId),
    cancel: (mailId, reason, at) => void cancelOne.run(reason, at, mailId),
    unsubscribe: (hash, at) => (hash === "" ? undefined : unsubscribe(hash, at)),
    unsubscribed: (accountId, recipient) => stopped.get(accountId, recipient) !== undefined,
    counts: (accountId) =>
      toMailCounts(accountId === undefined ? countAll.get() : countOne.get(accountId, accountId, accountId, accountId)),
    get: (accountId, mailId) => {
      const r = one.get(accountId, mailId);
      return r && toMail(r);
    },
  };
}
