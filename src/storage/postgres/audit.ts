import type { AuditRepository } from "../../domain/audit/repository.js";
import { type AuditRow, auditValues, toAuditEvent } from "../audit-rows.js";
import type { PgDb } from "./db.js";

/** The audit log in PostgreSQL, newest first by (created_at, id). */
export function pgAudit(db: PgDb): AuditRepository {
  return {
    insert: async (e) =>
      void (await db.count(
        "audit_insert",
        `INSERT INTO audit_events (audit_event_id, account_id, kind, actor, target, details, address, user_agent, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [...auditValues(e)],
      )),
    list: async (q) =>
      (
        await db.rows<AuditRow>(
          "audit_list",
          `SELECT * FROM audit_events
            WHERE account_id = $1
              AND (cardinality($2::text[]) = 0 OR kind = ANY($2::text[]))
              AND ($3::bigint IS NULL OR created_at >= $3)
              AND ($4::bigint IS NULL OR created_at < $4)
              AND ($5::bigint IS NULL OR (created_at, audit_event_id) < ($5, $6::text))
            ORDER BY created_at DESC, audit_event_id DESC LIMIT $7`,
          [
            q.accountId,
            q.kinds,
            q.since ?? null,
            q.until ?? null,
            q.before?.createdAt ?? null,
            q.before?.auditEventId ?? null,
            q.limit,
          ],
        )
      ).map(toAuditEvent),
    prune: (before, limit) =>
      db.count(
        "audit_prune",
        "DELETE FROM audit_events WHERE audit_event_id IN (SELECT audit_event_id FROM audit_events WHERE created_at " +
          "< $1 LIMIT $2)",
        [before, limit],
      ),
  };
}
