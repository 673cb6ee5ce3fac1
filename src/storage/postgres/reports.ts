import type { ReportRepository, ReportSeconds } from "../../domain/report/report.js";
import { slaFact, TIMER_COLUMNS, type TimerRow } from "../timer-rows.js";
import type { PgDb } from "./db.js";

// One chatbot's period is a range of conversations_chatbot_created (with the heap: last_message_at is in no
// index, see migration 18), of the partial conversations_handed_over and conversations_rated, of messages_report.
const PERIOD = "chatbot_id = $1 AND created_at >= $2 AND created_at < $3";

const seconds = (rows: Record<string, unknown>[]): ReportSeconds[] =>
  rows.map((r) => ({ seconds: Number(r.seconds), count: Number(r.count) }));

/** The report's counts in PostgreSQL, each from an index range, grouped in SQL (hash aggregates), all at once. */
export function pgReports(db: PgDb): ReportRepository {
  // The operator report: the conversations that came to someone in the period (conversation_activity_account),
  // then their lines, replies and ratings by conversation.
  const TAKEN = `SELECT DISTINCT conversation_id FROM conversation_activity
    WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 AND kind IN ('assigned', 'taken_over')`;
  return {
    operatorFacts: async (accountId, from, to) => {
      const period = [accountId, from, to];
      const [lines, replies, ratings, clocks, teams] = await Promise.all([
        db.rows(
          "report_operator_lines",
          `SELECT conversation_id, kind, to_email, to_name, created_at FROM conversation_activity
           WHERE conversation_id IN (${TAKEN}) AND created_at >= $2 ORDER BY conversation_id, created_at, activity_id`,
          period,
        ),
        db.rows(
          "report_operator_replies",
          `SELECT conversation_id, created_at FROM messages
           WHERE conversation_id IN (${TAKEN}) AND role = 'operator' AND created_at >= $2`,
          period,
        ),
        db.rows(
          "report_operator_ratings",
          `SELECT conversation_id, rating_score FROM conversations
           WHERE conversation_id IN (${TAKEN}) AND rating_score IS NOT NULL`,
          period,
        ),
        db.rows<TimerRow>(
          "report_operator_sla",
          `SELECT ${TIMER_COLUMNS} FROM conversations WHERE conversation_id IN (${TAKEN}) AND sla_due_at IS NOT NULL`,
          period,
        ),
        db.rows(
          "report_operator_teams",
          `SELECT t.team_id, t.name, coalesce(m.email, '') AS email
           FROM teams t LEFT JOIN team_members m ON m.team_id = t.team_id
           WHERE t.account_id = $1 ORDER BY t.name_key, t.team_id, m.email`,
          [accountId],
        ),
      ]);
      return {
        lines: lines.map((r) => ({
          conversationId: String(r.conversation_id),
          kind: String(r.kind),
          toEmail: String(r.to_email),
          toName: String(r.to_name),
          createdAt: Number(r.created_at),
        })),
        replies: replies.map((r) => ({ conversationId: String(r.conversation_id), createdAt: Number(r.created_at) })),
        ratings: ratings.map((r) => ({ conversationId: String(r.conversation_id), score: Number(r.rating_score) })),
        sla: clocks.map(slaFact),
        teams: teams.map((r) => ({ teamId: String(r.team_id), name: String(r.name), email: String(r.email) })),
      };
    },
    counts: async (chatbotId, from, to, idleBefore) => {
      const period = [chatbotId, from, to];
      const [starts, ratings, firstResponses, timesToClose, quarters, sla] = await Promise.all([
        db.rows(
          "report_starts",
          // Apart, the first is an index-only range, the second one of the partial index.
          `SELECT created_at / 900000 AS quarter, count(*) AS conversations, 0 AS handed
           FROM conversations WHERE ${PERIOD} GROUP BY 1
           UNION ALL
           SELECT created_at / 900000, 0, count(*) FROM conversations
           WHERE ${PERIOD} AND first_operator_at IS NOT NULL GROUP BY 1`,
          period,
        ),
        db.rows(
          "report_ratings",
          `SELECT rating_score AS score, count(*) AS count FROM conversations
           WHERE ${PERIOD} AND rating_score IS NOT NULL GROUP BY 1`,
          period,
        ),
        db.rows(
          "report_first_responses",
          `SELECT (first_operator_at - first_customer_at) / 1000 AS seconds, count(*) AS count FROM conversations
           WHERE ${PERIOD} AND first_operator_at IS NOT NULL AND first_operator_at >= first_customer_at GROUP BY 1`,
          period,
        ),
        db.rows(
          "report_times_to_close",
          `SELECT (coalesce(last_message_at, created_at) - created_at) / 1000 AS seconds, count(*) AS count
           FROM conversations WHERE ${PERIOD} AND (status = 'closed' OR coalesce(last_message_at, created_at) < $4)
           GROUP BY 1`,
          [...period, idleBefore],
        ),
        db.rows(
          "report_quarters",
          `SELECT created_at / 900000 AS quarter, count(*) AS messages FROM messages
           WHERE chatbot_id = $1 AND conversation_created_at >= $2 AND conversation_created_at < $3 GROUP BY 1`,
          period,
        ),
        db.rows(
          "report_sla",
          `SELECT count(*) FILTER (WHERE first_operator_at IS NOT NULL AND first_operator_at <= sla_due_at) AS hits,
             count(*) FILTER (WHERE sla_status = 'breached') AS breaches
           FROM conversations WHERE ${PERIOD} AND sla_due_at IS NOT NULL`,
          period,
        ),
      ]);
      return {
        starts: starts.map((r) => ({
          quarter: Number(r.quarter),
          conversations: Number(r.conversations),
          handedOver: Number(r.handed),
        })),
        ratings: ratings.map((r) => ({ score: Number(r.score), count: Number(r.count) })),
        firstResponses: seconds(firstResponses),
        timesToClose: seconds(timesToClose),
        messageQuarters: quarters.map((r) => ({ quarter: Number(r.quarter), messages: Number(r.messages) })),
        sla: { hits: Number(sla[0]?.hits ?? 0), breaches: Number(sla[0]?.breaches ?? 0) },
      };
    },
  };
}
