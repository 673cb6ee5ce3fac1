import type { MailRepository } from "../../domain/mail/repository.js";
import {
  countsSql,
  MAIL_COLUMNS,
  type MailCountRow,
  type MailRow,
  mailValues,
  toMail,
  toMailCounts,
} from "../mail-rows.js";
import type { PgDb } from "./db.js";
import { all, changed, execute, first } from "./query.js";

const UNSUBSCRIBED =
  "SELECT 1 FROM mail_outbox WHERE account_id = $1 AND recipient = $2 AND unsubscribed_at IS NOT NULL LIMIT 1";

/** The e-mail outbox on PostgreSQL, shared by every instance: a due mail is leased to one sender (SKIP LOCKED). */
export function pgMail(db: PgDb): MailRepository {
  return {
    enqueue: (m) =>
      changed(
        db,
        "mail_enqueue",
        `INSERT INTO mail_outbox (${MAIL_COLUMNS})
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15
         WHERE NOT EXISTS (
           SELECT 1 FROM mail_outbox WHERE account_id = $2 AND recipient = $4 AND unsubscribed_at IS NOT NULL)
         ON CONFLICT (account_id, dedupe_key) DO NOTHING`,
        [...mailValues(m)],
      ),
    claim: (now, leaseUntil, limit) =>
      all(
        db,
        "mail_claim",
        `UPDATE mail_outbox SET next_attempt_at = $2, attempts = attempts + 1, last_attempt_at = $1
         WHERE mail_id IN (
           SELECT mail_id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= $1
           ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING *`,
        [now, leaseUntil, limit],
        (r: MailRow) => toMail(r),
      ).then((ms) => ms.sort((a, b) => a.createdAt - b.createdAt)),
    setUnsubscribeHash: (mailId, hash) =>
      execute(db, "mail_unsub_hash", "UPDATE mail_outbox SET unsubscribe_hash = $1 WHERE mail_id = $2", [hash, mailId]),
    markSent: (mailId, at) =>
      execute(
        db,
        "mail_sent",
        `UPDATE mail_outbox SET status = 'sent', sent_at = $1, next_attempt_at = NULL
         WHERE mail_id = $2 AND status = 'pending'`,
        [at, mailId],
      ),
    markFailed: (mailId, error, at, next) =>
      execute(
        db,
        "mail_failed",
        `UPDATE mail_outbox SET status = $1, last_error = $2, last_attempt_at = $3, next_attempt_at = $4
         WHERE mail_id = $5 AND status = 'pending'`,
        [next === null ? "failed" : "pending", error, at, next, mailId],
      ),
    cancel: (mailId, reason, at) =>
      execute(
        db,
        "mail_cancel_one",
        `UPDATE mail_outbox SET status = 'cancelled', last_error = $1, last_attempt_at = $2, next_attempt_at = NULL
         WHERE mail_id = $3 AND status = 'pending'`,
        [reason, at, mailId],
      ),
    unsubscribe: async (hash, at) => {
      if (hash === "") return undefined;
      return db.unit(async () => {
        const r = await first(
          db,
          "mail_unsub",
          `UPDATE mail_outbox SET unsubscribed_at = coalesce(unsubscribed_at, $2) WHERE unsubscribe_hash = $1
           RETURNING account_id, recipient`,
          [hash, at],
          (r: { account_id: string; recipient: string }) => ({ accountId: r.account_id, recipient: r.recipient }),
        );
        if (r)
          await execute(
            db,
            "mail_cancel",
            `UPDATE mail_outbox SET status = 'cancelled', next_attempt_at = NULL
             WHERE account_id = $1 AND recipient = $2 AND status = 'pending'`,
            [r.accountId, r.recipient],
          );
        return r;
      });
    },
    unsubscribed: async (accountId, recipient) =>
      (await db.rows("mail_unsubscribed", UNSUBSCRIBED, [accountId, recipient])).length > 0,
    counts: async (accountId) =>
      toMailCounts(
        accountId === undefined
          ? (await db.rows<MailCountRow>("mail_counts_all", countsSql(""), []))[0]
          : (await db.rows<MailCountRow>("mail_counts", countsSql(" AND account_id = $1"), [accountId]))[0],
      ),
    get: (accountId, mailId) =>
      first(
        db,
        "mail_get",
        "SELECT * FROM mail_outbox WHERE account_id = $1 AND mail_id = $2",
        [accountId, mailId],
        toMail,
      ),
  };
}
