import type { ReportRepository, ReportSeconds, ReportStarts } from "../../../domain/report/report.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

// One chatbot's period is a range of each covering index: conversations_report (every conversation), the partial
// conversations_handed_over and conversations_rated (a small part), messages_report. No table row is read.
const PERIOD = "chatbot_id = ? AND created_at >= ? AND created_at < ?";

/** The report's counts in SQLite, each from an index range, grouped in SQL. */
export function sqliteReports(db: Db): Sync<ReportRepository> {
  const starts = db.prepare<[string, number, number, string, number, number], ReportStarts>(
    `SELECT created_at / 900000 AS quarter, count(*) AS conversations, 0 AS handedOver
     FROM conversations INDEXED BY conversations_report WHERE ${PERIOD} GROUP BY 1
     UNION ALL
     SELECT created_at / 900000, 0, count(*)
     FROM conversations INDEXED BY conversations_handed_over WHERE ${PERIOD} AND first_operator_at IS NOT NULL
     GROUP BY 1`,
  );
  const ratings = db.prepare<[string, number, number], { score: number; count: number }>(
    `SELECT rating_score AS score, count(*) AS count
     FROM conversations INDEXED BY conversations_rated WHERE ${PERIOD} AND rating_score IS NOT NULL GROUP BY 1`,
  );
  const firstResponses = db.prepare<[string, number, number], ReportSeconds>(
    `SELECT (first_operator_at - first_customer_at) / 1000 AS seconds, count(*) AS count
     FROM conversations INDEXED BY conversations_handed_over
     WHERE ${PERIOD} AND first_operator_at IS NOT NULL AND first_operator_at >= first_customer_at GROUP BY 1`,
  );
  const timesToClose = db.prepare<[string, number, number, number], ReportSeconds>(
    `SELECT (coalesce(last_message_at, created_at) - created_at) / 1000 AS seconds, count(*) AS count
     FROM conversations INDEXED BY conversations_report
     WHERE ${PERIOD} AND (status = 'closed' OR coalesce(last_message_at, created_at) < ?) GROUP BY 1`,
  );
  const quarters = db.prepare<[string, number, number], { quarter: number; messages: number }>(
    `SELECT created_at / 900000 AS quarter, count(*) AS messages FROM messages
     WHERE chatbot_id = ? AND conversation_created_at >= ? AND conversation_created_at < ? GROUP BY 1`,
  );
  return {
    starts: (chatbotId, from, to) => starts.all(chatbotId, from, to, chatbotId, from, to),
    ratings: (chatbotId, from, to) => ratings.all(chatbotId, from, to),
    firstResponses: (chatbotId, from, to) => firstResponses.all(chatbotId, from, to),
    timesToClose: (chatbotId, from, to, idleBefore) => timesToClose.all(chatbotId, from, to, idleBefore),
    messageQuarters: (chatbotId, from, to) => quarters.all(chatbotId, from, to),
  };
}
