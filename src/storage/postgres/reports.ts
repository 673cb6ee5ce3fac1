import type { ReportConversation, ReportRepository } from "../../domain/report/report.js";
import type { PgDb } from "./db.js";

const num = (v: unknown): number | null => (v === null ? null : Number(v));

/** The report's rows in PostgreSQL: the chatbot's period by conversations_chatbot_created, messages by conversation. */
export function pgReports(db: PgDb): ReportRepository {
  return {
    conversations: async (chatbotId, from, to) => {
      const rows = await db.rows(
        "report_conversations",
        `SELECT c.created_at, coalesce(c.last_message_at, c.created_at) AS last_at, c.status,
           (SELECT min(m.created_at) FROM messages m
             WHERE m.conversation_id = c.conversation_id AND m.role = 'user') AS first_user,
           (SELECT min(m.created_at) FROM messages m
             WHERE m.conversation_id = c.conversation_id AND m.role = 'operator') AS first_operator,
           r.score
         FROM conversations c LEFT JOIN conversation_ratings r ON r.conversation_id = c.conversation_id
         WHERE c.chatbot_id = $1 AND c.created_at >= $2 AND c.created_at < $3`,
        [chatbotId, from, to],
      );
      return rows.map(
        (r): ReportConversation => ({
          createdAt: Number(r.created_at),
          lastActivityAt: Number(r.last_at),
          status: r.status as ReportConversation["status"],
          firstCustomerAt: num(r.first_user),
          firstOperatorAt: num(r.first_operator),
          score: num(r.score),
        }),
      );
    },
    messageQuarters: async (chatbotId, from, to) => {
      const rows = await db.rows(
        "report_quarters",
        // OFFSET 0 keeps the lateral subquery a per-conversation index read: joined flat, the planner may hash
        // the whole messages table, every chatbot's, to join a small period.
        `SELECT m.created_at / 900000 AS quarter, count(*) AS messages
         FROM conversations c CROSS JOIN LATERAL (
           SELECT created_at FROM messages WHERE messages.conversation_id = c.conversation_id OFFSET 0
         ) m
         WHERE c.chatbot_id = $1 AND c.created_at >= $2 AND c.created_at < $3
         GROUP BY 1`,
        [chatbotId, from, to],
      );
      return rows.map((r) => ({ quarter: Number(r.quarter), messages: Number(r.messages) }));
    },
  };
}
