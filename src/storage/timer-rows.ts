import type { DueTimer, SlaStatus, TimerState } from "../domain/conversation/repository.js";
import type { OperatorReportFacts } from "../domain/report/operator-facts.js";
import { type Big, numOrNull } from "./row-values.js";

// The rows of the conversations' snoozes and SLA clocks that both back ends read alike.

/** A conversation's timer columns. */
export interface TimerRow {
  conversation_id: string;
  snoozed_until: Big | null;
  sla_due_at: Big | null;
  sla_status: string | null;
  first_operator_at: Big | null;
}

export const TIMER_COLUMNS = "conversation_id, snoozed_until, sla_due_at, sla_status, first_operator_at";

export const toTimerState = (r: TimerRow): TimerState => ({
  snoozedUntil: numOrNull(r.snoozed_until),
  slaDueAt: numOrNull(r.sla_due_at),
  slaStatus: r.sla_status as TimerState["slaStatus"],
  firstOperatorAt: numOrNull(r.first_operator_at),
});

/** A conversation's SLA clock as the operator report reads it (a row whose sla_due_at is set). */
export const slaFact = (r: TimerRow): OperatorReportFacts["sla"][number] => ({
  conversationId: r.conversation_id,
  dueAt: Number(r.sla_due_at),
  firstOperatorAt: numOrNull(r.first_operator_at),
  breached: r.sla_status === "breached",
});

/** A due snooze or clock. */
export interface DueRow {
  conversation_id: string;
  account_id: string;
  at: Big;
}

export const toDue = (r: DueRow): DueTimer => ({
  conversationId: r.conversation_id,
  accountId: r.account_id,
  at: Number(r.at),
});

/**
 * How a due pending clock settles, in SQL: met when a person wrote by the due instant, cancelled when the
 * conversation was closed unanswered, else breached.
 */
export const SETTLE_SQL = `CASE WHEN first_operator_at IS NOT NULL AND first_operator_at <= sla_due_at THEN 'met'
  WHEN status = 'closed' THEN 'cancelled' ELSE 'breached' END`;

export type Settled = Exclude<SlaStatus, "none" | "pending">;
