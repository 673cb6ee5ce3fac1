import type { ConversationRating, RatingRepository } from "../../domain/conversation/repository.js";
import type { PgDb } from "./db.js";

/** Ratings in PostgreSQL, one row per conversation. */
export function pgRatings(db: PgDb): RatingRepository {
  return {
    set: async (r) =>
      void (await db.count(
        "rating_set",
        // The report counts ratings from the conversation's row (its index): one statement keeps both. The
        // conversation's row first, as the message writes lock it.
        `WITH v AS (UPDATE conversations SET rating_score = $3 WHERE conversation_id = $1)
         INSERT INTO conversation_ratings (conversation_id, account_id, score, comment, rated_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (conversation_id) DO UPDATE SET score = excluded.score, comment = excluded.comment,
           rated_at = excluded.rated_at`,
        [r.conversationId, r.accountId, r.score, r.comment, r.ratedAt],
      )),
    forConversations: async (ids) => {
      const rows = await db.rows(
        "rating_some",
        "SELECT conversation_id, score, comment, rated_at FROM conversation_ratings WHERE conversation_id = ANY($1)",
        [ids],
      );
      return new Map<string, ConversationRating>(
        rows.map((r) => [
          r.conversation_id as string,
          { score: Number(r.score), comment: r.comment as string, ratedAt: Number(r.rated_at) },
        ]),
      );
    },
  };
}
