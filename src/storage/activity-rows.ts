import type { ActivityKind, ActivityRecord } from "../domain/conversation/repository.js";

/** A conversation_activity row as both back ends read it (PostgreSQL bigints as strings or numbers). */
export interface ActivityRow {
  activity_id: string;
  account_id: string;
  conversation_id: string;
  kind: string;
  actor_email: string;
  actor_name: string;
  from_email: string;
  from_name: string;
  to_email: string;
  to_name: string;
  detail: string;
  created_at: number | string;
}

export const toActivity = (r: ActivityRow): ActivityRecord => ({
  activityId: r.activity_id,
  accountId: r.account_id,
  conversationId: r.conversation_id,
  kind: r.kind as ActivityKind,
  actorEmail: r.actor_email,
  actorName: r.actor_name,
  fromEmail: r.from_email,
  fromName: r.from_name,
  toEmail: r.to_email,
  toName: r.to_name,
  detail: r.detail,
  createdAt: Number(r.created_at),
});

/** An activity's insert values, in the column order of ACTIVITY_COLUMNS. */
export const activityValues = (a: ActivityRecord) => [
  a.activityId,
  a.accountId,
  a.conversationId,
  a.kind,
  a.actorEmail,
  a.actorName,
  a.fromEmail,
  a.fromName,
  a.toEmail,
  a.toName,
  a.detail,
  a.createdAt,
];
export const ACTIVITY_COLUMNS =
  "activity_id, account_id, conversation_id, kind, actor_email, actor_name, from_email, from_name, to_email, to_name, detail, created_at";
