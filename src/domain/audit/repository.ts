/** What the audit log records: actions on the account, never what the account's customers do. */
export const AUDIT_KINDS = [
  "api_key.created",
  "api_key.rotated",
  "api_key.revoked",
  "member.invited",
  "member.updated",
  "member.removed",
  "sign_in.succeeded",
  "sign_in.failed",
  "session.revoked",
  "webhook_endpoint.created",
  "webhook_endpoint.updated",
  "webhook_endpoint.deleted",
  "contact.erased",
  "contact.exported",
  "retention.ran",
  "chatbot.updated",
  "invitation.accepted",
  "conversation.assigned",
  "team.created",
  "team.updated",
  "team.deleted",
] as const;

/** One kind of audited action. */
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** One audited action: who, what, when, from where. Details carry ids, roles and counts, never a secret. */
export interface AuditEventRecord {
  auditEventId: string;
  accountId: string;
  kind: AuditKind;
  /** The person's e-mail, the account's for its owner and servers; "service" for the service's own runs. */
  actor: string;
  /** What it was done to (an id); "" when none. */
  target: string;
  details: Record<string, string>;
  address: string;
  userAgent: string;
  createdAt: number;
}

/** One page request of an account's audit log, newest first. */
export interface AuditQuery {
  accountId: string;
  /** Empty: every kind. */
  kinds: readonly string[];
  /** At or after (inclusive). */
  since: number | undefined;
  /** Before (exclusive). */
  until: number | undefined;
  /** Keyset: events strictly older than this (createdAt, auditEventId). */
  before: { createdAt: number; auditEventId: string } | undefined;
  limit: number;
}

/** Storage of the audit log; written in the unit of work of the action it records. */
export interface AuditRepository {
  insert(e: AuditEventRecord): Promise<void>;
  list(q: AuditQuery): Promise<AuditEventRecord[]>;
  /** Drops up to `limit` events older than `before`; answers the count. */
  prune(before: number, limit: number): Promise<number>;
}
