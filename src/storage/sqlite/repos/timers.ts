import type { TimerRepository } from "../../../domain/conversation/repository.js";
import type { Sync } from "../../sync.js";
import {
  type DueRow,
  SETTLE_SQL,
  type Settled,
  TIMER_COLUMNS,
  type TimerRow,
  toDue,
  toTimerState,
} from "../../timer-rows.js";
import type { Db } from "../database.js";

/** The conversations' snoozes and first-response SLA clocks in SQLite (columns of `conversations`, migration 39). */
export function sqliteTimers(db: Db): Sync<TimerRepository> {
  const states = db.prepare<[string], TimerRow>(
    `SELECT ${TIMER_COLUMNS} FROM json_each(?) j JOIN conversations c ON c.conversation_id = j.value`,
  );
  const before = db.prepare<[string], number | null>(
    "SELECT snoozed_until FROM conversations WHERE conversation_id = ?",
  );
  const setSnooze = db.prepare("UPDATE conversations SET snoozed_until = ? WHERE conversation_id = ?");
  const wakeAt = db.prepare(
    "UPDATE conversations SET snoozed_until = NULL WHERE conversation_id = ? AND snoozed_until = ?",
  );
  const wakeAny = db.prepare(
    "UPDATE conversations SET snoozed_until = NULL WHERE conversation_id = ? AND snoozed_until IS NOT NULL",
  );
  const dueSnoozes = db.prepare<[number, number], DueRow>(
    `SELECT conversation_id, account_id, snoozed_until AS at FROM conversations INDEXED BY conversations_snoozed
     WHERE snoozed_until IS NOT NULL AND snoozed_until <= ? ORDER BY snoozed_until LIMIT ?`,
  );
  const minutes = "(SELECT b.first_response_sla_minutes FROM chatbots b WHERE b.chatbot_id = conversations.chatbot_id)";
  const startSla = db.prepare<[{ at: number; id: string }], { sla_due_at: number }>(
    `UPDATE conversations SET sla_status = 'pending', sla_due_at = @at + 60000 * ${minutes}
     WHERE conversation_id = @id AND sla_status IS NULL AND first_operator_at IS NULL
       AND ${minutes} > 0
     RETURNING sla_due_at`,
  );
  const dueSlas = db.prepare<[number, number], DueRow>(
    `SELECT conversation_id, account_id, sla_due_at AS at FROM conversations INDEXED BY conversations_sla_pending
     WHERE sla_status = 'pending' AND sla_due_at <= ? ORDER BY sla_due_at LIMIT ?`,
  );
  const settle = db
    .prepare<[string, number], Settled>(
      `UPDATE conversations SET sla_status = ${SETTLE_SQL}
       WHERE conversation_id = ? AND sla_status = 'pending' AND sla_due_at <= ? RETURNING sla_status`,
    )
    .pluck();
  return {
    states: (ids) => {
      const out = new Map<string, ReturnType<typeof toTimerState>>();
      if (ids.length === 0) return out;
      for (const r of states.all(JSON.stringify(ids))) out.set(r.conversation_id, toTimerState(r));
      return out;
    },
    setSnooze: (id, until) => {
      const was = before.pluck().get(id) ?? null;
      setSnooze.run(until, id);
      return was;
    },
    wake: (id, until) => (until === null ? wakeAny.run(id) : wakeAt.run(id, until)).changes === 1,
    dueSnoozes: (now, limit) => dueSnoozes.all(now, limit).map(toDue),
    startSla: (id, at) => startSla.get({ at, id })?.sla_due_at ?? null,
    dueSlas: (now, limit) => dueSlas.all(now, limit).map(toDue),
    settleSla: (id, now) => settle.get(id, now),
  };
}
