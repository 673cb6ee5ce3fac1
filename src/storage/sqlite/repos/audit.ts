import type { AuditRepository } from "../../../domain/audit/repository.js";
import { type AuditRow, auditValues, toAuditEvent } from "../../audit-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** The audit log in SQLite, newest first by (created_at, id). */
export function sqliteAudit(db: Db): Sync<AuditRepository> {
  const insert = db.prepare(
    `INSERT INTO audit_events (audit_event_id, account_id, kind, actor, target, details, address, user_agent, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Absent bounds are passed as NULL and match everything; kinds as a JSON array ('[]': every kind).
  const list = db.prepare<unknown[], AuditRow>(
    `SELECT * FROM audit_events
      WHERE account_id = ?
        AND (? = '[]' OR kind IN (SELECT value FROM json_each(?)))
        AND (? IS NULL OR created_at >= ?)
        AND (? IS NULL OR created_at < ?)
        AND (? IS NULL OR (created_at, audit_event_id) < (?, ?))
      ORDER BY created_at DESC, audit_event_id DESC LIMIT ?`,
  );
  const prune = db.prepare(
    "DELETE FROM audit_events WHERE rowid IN (SELECT rowid FROM audit_events WHERE created_at < ? LIMIT ?)",
  );
  return {
    insert: (e) => void insert.run(...auditValues(e)),
    list: (q) => {
      const kinds = JSON.stringify(q.kinds);
      const since = q.since ?? null;
      const until = q.until ?? null;
      const at = q.before?.createdAt ?? null;
      return list
        .all(q.accountId, kinds, kinds, since, since, until, until, at, at, q.before?.auditEventId ?? null, q.limit)
        .map(toAuditEvent);
    },
    prune: (before, limit) => prune.run(before, limit).changes,
  };
}
