import type { AuditEventRecord, AuditKind } from "../domain/audit/repository.js";

/** A row of `audit_events`, the same on both back ends. */
export interface AuditRow {
  audit_event_id: string;
  account_id: string;
  kind: string;
  actor: string;
  target: string;
  details: string;
  address: string;
  user_agent: string;
  created_at: number | string;
}

/** The row as the domain's record (PostgreSQL may hand a bigint over as a string). */
export const toAuditEvent = (r: AuditRow): AuditEventRecord => ({
  auditEventId: r.audit_event_id,
  accountId: r.account_id,
  kind: r.kind as AuditKind,
  actor: r.actor,
  target: r.target,
  details: JSON.parse(r.details) as Record<string, string>,
  address: r.address,
  userAgent: r.user_agent,
  createdAt: Number(r.created_at),
});

/** The values of one insert, in the column order both back ends write them. */
export const auditValues = (e: AuditEventRecord) =>
  [
    e.auditEventId,
    e.accountId,
    e.kind,
    e.actor,
    e.target,
    JSON.stringify(e.details),
    e.address,
    e.userAgent,
    e.createdAt,
  ] as const;
