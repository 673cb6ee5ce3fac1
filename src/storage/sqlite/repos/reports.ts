import type { ReportConversation, ReportRepository } from "../../../domain/report/report.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

type Row = [number, number, string, number | null, number | null, number | null];

/** The report's rows in SQLite: the chatbot's period by conversations_chatbot_created, messages by conversation. */
export function sqliteReports(db: Db): Sync<ReportRepository> {
  const conversations = db
    .prepare<[string, number, number], Row>(
      `SELECT c.created_at, coalesce(c.last_message_at, c.created_at), c.status,
         (SELECT min(m.created_at) FROM messages m WHERE m.conversation_id = c.conversation_id AND m.role = 'user'),
         (SELECT min(m.created_at) FROM messages m WHERE m.conversation_id = c.conversation_id AND m.role = 'operator'),
         r.score
       FROM conversations c LEFT JOIN conversation_ratings r ON r.conversation_id = c.conversation_id
       WHERE c.chatbot_id = ? AND c.created_at >= ? AND c.created_at < ?`,
    )
    .raw(true);
  const quarters = db.prepare<[string, number, number], { quarter: number; messages: number }>(
    `SELECT m.created_at / 900000 AS quarter, count(*) AS messages
     FROM conversations c JOIN messages m ON m.conversation_id = c.conversation_id
     WHERE c.chatbot_id = ? AND c.created_at >= ? AND c.created_at < ?
     GROUP BY 1`,
  );
  return {
    conversations: (chatbotId, from, to) =>
      (conversations.all(chatbotId, from, to) as unknown as Row[]).map(
        (r): ReportConversation => ({
          createdAt: r[0],
          lastActivityAt: r[1],
          status: r[2] as ReportConversation["status"],
          firstCustomerAt: r[3],
          firstOperatorAt: r[4],
          score: r[5],
        }),
      ),
    messageQuarters: (chatbotId, from, to) => quarters.all(chatbotId, from, to),
  };
}
