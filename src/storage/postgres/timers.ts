import type { TimerRepository } from "../../domain/conversation/repository.js";
import {
  type DueRow,
  SETTLE_SQL,
  type Settled,
  TIMER_COLUMNS,
  type TimerRow,
  toDue,
  toTimerState,
} from "../timer-rows.js";
import type { PgDb } from "./db.js";

/**
 * Where a unit of work keeps the snooze of a conversation its message append has just updated (and holds locked to
 * the commit): the append's row answers it, so the customer's message wakes a conversation that is not snoozed
 * without a statement (see PgDb.held).
 */
export const heldSnoozeKey = (conversationId: string) => `snoozed:${conversationId}`;

/**
 * The conversations' snoozes and first-response SLA clocks in PostgreSQL (columns of `conversations`, migration
 * 31). A waking and a settling are one guarded UPDATE: of two instances, the second waits for the first's row lock,
 * then finds its condition no longer true and changes nothing.
 */
export function pgTimers(db: PgDb): TimerRepository {
  return {
    states: async (ids) => {
      const out = new Map<string, ReturnType<typeof toTimerState>>();
      if (ids.length === 0) return out;
      const rows = await db.rows<TimerRow>(
        "timer_states",
        `SELECT ${TIMER_COLUMNS} FROM conversations WHERE conversation_id = ANY($1::text[])`,
        [ids],
      );
      for (const r of rows) out.set(r.conversation_id, toTimerState(r));
      return out;
    },
    setSnooze: async (id, until) => {
      db.held?.delete(heldSnoozeKey(id));
      const [r] = await db.rows<{ was: string | null }>(
        "timer_snooze",
        `UPDATE conversations v SET snoozed_until = $2
         FROM (SELECT snoozed_until FROM conversations WHERE conversation_id = $1 FOR UPDATE) AS before
         WHERE v.conversation_id = $1 RETURNING before.snoozed_until AS was`,
        [id, until],
      );
      return r?.was == null ? null : Number(r.was);
    },
    wake: async (id, until) => {
      // Not snoozed when this unit's append updated the row, which it has held locked since: nothing to wake.
      const key = heldSnoozeKey(id);
      const held = db.held?.get(key);
      db.held?.delete(key);
      if (until === null && held === null) return false;
      return (
        (until === null
          ? await db.count(
              "timer_wake_any",
              "UPDATE conversations SET snoozed_until = NULL WHERE conversation_id = $1 AND snoozed_until IS NOT NULL",
              [id],
            )
          : await db.count(
              "timer_wake",
              "UPDATE conversations SET snoozed_until = NULL WHERE conversation_id = $1 AND snoozed_until = $2",
              [id, until],
            )) === 1
      );
    },
    dueSnoozes: async (now, limit) =>
      (
        await db.rows<DueRow>(
          "timer_due_snoozes",
          `SELECT conversation_id, account_id, snoozed_until AS at FROM conversations
           WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1 ORDER BY snoozed_until LIMIT $2`,
          [now, limit],
        )
      ).map(toDue),
    startSla: async (id, at) => {
      const [r] = await db.rows<{ sla_due_at: string }>(
        "timer_start_sla",
        `UPDATE conversations v SET sla_status = 'pending', sla_due_at = $2::bigint + 60000 * b.first_response_sla_minutes
         FROM chatbots b
         WHERE v.conversation_id = $1 AND b.chatbot_id = v.chatbot_id AND b.first_response_sla_minutes > 0
           AND v.sla_status IS NULL AND v.first_operator_at IS NULL
         RETURNING v.sla_due_at`,
        [id, at],
      );
      return r ? Number(r.sla_due_at) : null;
    },
    dueSlas: async (now, limit) =>
      (
        await db.rows<DueRow>(
          "timer_due_slas",
          `SELECT conversation_id, account_id, sla_due_at AS at FROM conversations
           WHERE sla_status = 'pending' AND sla_due_at <= $1 ORDER BY sla_due_at LIMIT $2`,
          [now, limit],
        )
      ).map(toDue),
    settleSla: async (id, now) => {
      const [r] = await db.rows<{ sla_status: Settled }>(
        "timer_settle_sla",
        `UPDATE conversations SET sla_status = ${SETTLE_SQL}
         WHERE conversation_id = $1 AND sla_status = 'pending' AND sla_due_at <= $2 RETURNING sla_status`,
        [id, now],
      );
      return r?.sla_status;
    },
  };
}
