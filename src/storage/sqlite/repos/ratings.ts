import type { ConversationRating, RatingRepository } from "../../../domain/conversation/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  conversation_id: string;
  score: number;
  comment: string;
  rated_at: number;
}

/** Ratings in SQLite, one row per conversation. */
export function sqliteRatings(db: Db): Sync<RatingRepository> {
  const set = db.prepare(
    `INSERT INTO conversation_ratings (conversation_id, account_id, score, comment, rated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (conversation_id) DO UPDATE SET score = excluded.score, comment = excluded.comment,
       rated_at = excluded.rated_at`,
  );
  // The report counts ratings from the conversation's row (its index), kept in the same transaction.
  const onConversation = db.prepare("UPDATE conversations SET rating_score = ? WHERE conversation_id = ?");
  const rate = db.transaction((r: Parameters<RatingRepository["set"]>[0]) => {
    onConversation.run(r.score, r.conversationId);
    set.run(r.conversationId, r.accountId, r.score, r.comment, r.ratedAt);
  });
  const some = db.prepare<[string], Row>(
    "SELECT conversation_id, score, comment, rated_at FROM conversation_ratings WHERE conversation_id IN (SELECT value FROM json_each(?))",
  );
  return {
    set: (r) => rate.immediate(r),
    forConversations: (ids) =>
      new Map<string, ConversationRating>(
        some
          .all(JSON.stringify(ids))
          .map((r) => [r.conversation_id, { score: r.score, comment: r.comment, ratedAt: r.rated_at }]),
      ),
  };
}
