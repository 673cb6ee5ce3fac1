import type { HoldingLine } from "../../../domain/report/operators.js";
import type { ReportRepository, ReportSeconds } from "../../../domain/report/report.js";
import type { Sync } from "../../sync.js";
import { slaFact, TIMER_COLUMNS, type TimerRow } from "../../timer-rows.js";
import type { Db } from "../database.js";

const QUARTER = 900_000;
const DAY = 86_400_000;

// One chatbot's period is a range of each covering index: conversations_report (every conversation), the partial
// conversations_handed_over and conversations_rated (a small part), messages_report. No table row is read.
const PERIOD = "chatbot_id = @bot AND created_at >= @from AND created_at < @to";
// SQLite has no hash aggregate: a GROUP BY sorts every row it groups, which at a million rows costs twice the
// reading of the range. So a count per quarter hour is a walk over the quarter hours, each a count of its own
// range of the index (a seek, then the entries), and the durations are one array, sorted here.
const perQuarter = (
  count: string,
) => `WITH RECURSIVE q(n) AS (SELECT @first UNION ALL SELECT n + 1 FROM q WHERE n < @last)
  SELECT n, (${count} AND created_at >= max(n * ${QUARTER}, @lo) AND created_at < min((n + 1) * ${QUARTER}, @hi)) FROM q`;

/** The report's counts in SQLite, from index ranges. */
export function sqliteReports(db: Db): Sync<ReportRepository> {
  const starts = db
    .prepare<[Record<string, unknown>], [number, number]>(
      perQuarter("SELECT count(*) FROM conversations INDEXED BY conversations_report WHERE chatbot_id = @bot"),
    )
    .raw(true);
  const handedOver = db
    .prepare<[Record<string, unknown>], [number, number]>(
      `SELECT created_at / ${QUARTER}, count(*) FROM conversations INDEXED BY conversations_handed_over
       WHERE ${PERIOD} AND first_operator_at IS NOT NULL GROUP BY 1`,
    )
    .raw(true);
  const ratings = db.prepare<[Record<string, unknown>], { score: number; count: number }>(
    `SELECT rating_score AS score, count(*) AS count FROM conversations INDEXED BY conversations_rated
     WHERE ${PERIOD} AND rating_score IS NOT NULL GROUP BY 1`,
  );
  const firstResponses = db.prepare<[Record<string, unknown>], ReportSeconds>(
    `SELECT (first_operator_at - first_customer_at) / 1000 AS seconds, count(*) AS count
     FROM conversations INDEXED BY conversations_handed_over
     WHERE ${PERIOD} AND first_operator_at IS NOT NULL AND first_operator_at >= first_customer_at GROUP BY 1`,
  );
  // The closed ones' seconds, and the period's last activity: no message of its conversations is later.
  const closed = db
    .prepare<[Record<string, unknown>], [string, number | null]>(
      `SELECT json_group_array((coalesce(last_message_at, created_at) - created_at) / 1000)
         FILTER (WHERE status = 'closed' OR coalesce(last_message_at, created_at) < @idle),
         max(coalesce(last_message_at, created_at))
       FROM conversations INDEXED BY conversations_report WHERE ${PERIOD}`,
    )
    .raw(true);
  const messages = db
    .prepare<[Record<string, unknown>], [number, number]>(
      perQuarter(
        "SELECT count(*) FROM messages INDEXED BY messages_report WHERE chatbot_id = @bot AND " +
          "conversation_created_at >= @from AND conversation_created_at < @to",
      ),
    )
    .raw(true);
  // The clocks' partial index (migration 39) holds only the conversations an SLA clock ran for.
  const sla = db
    .prepare<[Record<string, unknown>], [number, number]>(
      `SELECT count(*) FILTER (WHERE first_operator_at IS NOT NULL AND first_operator_at <= sla_due_at),
         count(*) FILTER (WHERE sla_status = 'breached')
       FROM conversations INDEXED BY conversations_sla WHERE ${PERIOD} AND sla_due_at IS NOT NULL`,
    )
    .raw(true);
  // The operator report: the conversations that came to someone in the period (conversation_activity_account),
  // then their lines, replies and ratings by conversation.
  const TAKEN = `SELECT DISTINCT conversation_id FROM conversation_activity INDEXED BY conversation_activity_account
    WHERE account_id = @account AND created_at >= @from AND created_at < @to AND kind IN ('assigned', 'taken_over')`;
  const lines = db.prepare<[Record<string, unknown>], HoldingLine>(
    `SELECT conversation_id AS conversationId, kind, to_email AS toEmail, to_name AS toName, created_at AS createdAt
     FROM conversation_activity WHERE conversation_id IN (${TAKEN}) AND created_at >= @from
     ORDER BY conversation_id, created_at, rowid`,
  );
  const replies = db.prepare<[Record<string, unknown>], { conversationId: string; createdAt: number }>(
    `SELECT conversation_id AS conversationId, created_at AS createdAt FROM messages
     WHERE conversation_id IN (${TAKEN}) AND role = 'operator' AND created_at >= @from`,
  );
  const rated = db.prepare<[Record<string, unknown>], { conversationId: string; score: number }>(
    `SELECT conversation_id AS conversationId, rating_score AS score FROM conversations
     WHERE conversation_id IN (${TAKEN}) AND rating_score IS NOT NULL`,
  );
  const clocks = db.prepare<[Record<string, unknown>], TimerRow>(
    `SELECT ${TIMER_COLUMNS} FROM conversations WHERE conversation_id IN (${TAKEN}) AND sla_due_at IS NOT NULL`,
  );
  const teams = db.prepare<[string], { teamId: string; name: string; email: string }>(
    `SELECT t.team_id AS teamId, t.name, coalesce(m.email, '') AS email
     FROM teams t LEFT JOIN team_members m ON m.team_id = t.team_id
     WHERE t.account_id = ? ORDER BY t.name_key, t.team_id, m.email`,
  );
  const quarterOf = (t: number) => Math.floor(t / QUARTER);
  return {
    operatorFacts: (account, from, to) => {
      const p = { account, from, to };
      return {
        lines: lines.all(p),
        replies: replies.all(p),
        ratings: rated.all(p),
        sla: clocks.all(p).map(slaFact),
        teams: teams.all(account),
      };
    },
    counts: (bot, from, to, idle) => {
      const period = { bot, from, to };
      const [secondsJson, lastActivity] = closed.get({ ...period, idle })!;
      const quarters = (rows: [number, number][]) =>
        rows.filter((r) => r[1] > 0).map((r) => ({ quarter: r[0], count: r[1] }));
      return {
        starts: [
          ...quarters(starts.all({ bot, first: quarterOf(from), last: quarterOf(to - 1), lo: from, hi: to })).map(
            (r) => ({ quarter: r.quarter, conversations: r.count, handedOver: 0 }),
          ),
          ...handedOver.all(period).map((r) => ({ quarter: r[0], conversations: 0, handedOver: r[1] })),
        ],
        ratings: ratings.all(period),
        sla: ((r) => ({ hits: r[0], breaches: r[1] }))(sla.get(period)!),
        firstResponses: firstResponses.all(period),
        timesToClose: histogram(JSON.parse(secondsJson) as number[]),
        // A message is at or after its conversation's start, but a clock set back may write one a little
        // before: a day's margin.
        messageQuarters:
          lastActivity === null
            ? []
            : quarters(
                messages.all({
                  ...period,
                  first: quarterOf(from - DAY),
                  last: quarterOf(lastActivity),
                  lo: from - DAY,
                  hi: lastActivity + 1,
                }),
              ).map((r) => ({ quarter: r.quarter, messages: r.count })),
      };
    },
  };
}

/** How many of the values are each value: sorted in a typed array, then counted in runs. */
function histogram(values: number[]): ReportSeconds[] {
  const sorted = Float64Array.from(values).sort();
  const out: ReportSeconds[] = [];
  for (const v of sorted) {
    const last = out[out.length - 1];
    if (last?.seconds === v) last.count++;
    else out.push({ seconds: v, count: 1 });
  }
  return out;
}
