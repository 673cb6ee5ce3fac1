import { ReplyClaimLost, type ReplyRepository } from "../../domain/conversation/replies.js";
import { type ReplyRow, toReplyClaim } from "../reply-rows.js";
import type { PgDb } from "./db.js";

/** SQLSTATE division_by_zero: reply_complete's way of saying the claim is lost. */
const DIVISION_BY_ZERO = "22012";

/**
 * Claims of the agent's replies in PostgreSQL. Each change is one statement on the message's row: two instances
 * taking one message's reply at once both reach its row lock, and the second then sees the first's claim (ON
 * CONFLICT re-checks its condition on the committed row), so exactly one holds it.
 */
export function pgReplies(db: PgDb): ReplyRepository {
  return {
    // A fresh message's row: nobody waits for the answer, so it goes with the unit's next statement or its COMMIT.
    open: (c) =>
      db.write(
        "reply_open",
        `INSERT INTO agent_replies (message_id, conversation_id, claim, lease_until, reply_order)
         VALUES ($1, $2, $3, $4, NULL)`,
        [c.messageId, c.conversationId, c.claim, c.leaseUntil],
      ),
    take: async (c, now) =>
      (await db.count(
        "reply_take",
        `INSERT INTO agent_replies (message_id, conversation_id, claim, lease_until, reply_order)
         VALUES ($1, $2, $3, $4, NULL)
         ON CONFLICT (message_id) DO UPDATE SET claim = excluded.claim, lease_until = excluded.lease_until
           WHERE agent_replies.reply_order IS NULL AND agent_replies.lease_until <= $5`,
        [c.messageId, c.conversationId, c.claim, c.leaseUntil, now],
      )) === 1,
    find: async (messageId) => {
      const [r] = await db.rows<ReplyRow>("reply_find", "SELECT * FROM agent_replies WHERE message_id = $1", [
        messageId,
      ]);
      return r && toReplyClaim(r);
    },
    renew: async (messageId, claim, leaseUntil) =>
      (await db.count(
        "reply_renew",
        "UPDATE agent_replies SET lease_until = $1 WHERE message_id = $2 AND claim = $3 AND reply_order IS NULL",
        [leaseUntil, messageId, claim],
      )) === 1,
    release: async (messageId, claim) =>
      void (await db.count(
        "reply_release",
        "UPDATE agent_replies SET lease_until = 0 WHERE message_id = $1 AND claim = $2 AND reply_order IS NULL",
        [messageId, claim],
      )),
    // Nobody waits for it: it goes with the unit's COMMIT, and divides by zero when the claim is lost (no row
    // changed), which fails the unit before its COMMIT; the unit then fails with ReplyClaimLost.
    complete: (messageId, claim, replyOrder) =>
      db.write(
        "reply_complete",
        `WITH done AS (
           UPDATE agent_replies SET reply_order = $1 WHERE message_id = $2 AND claim = $3 AND reply_order IS NULL
           RETURNING 1)
         SELECT 1 / (SELECT count(*)::int FROM done)`,
        [replyOrder, messageId, claim],
        (e) => ((e as { code?: unknown } | null)?.code === DIVISION_BY_ZERO ? new ReplyClaimLost() : e),
      ),
    prune: (before, limit) =>
      db.unit(() =>
        db.count(
          "reply_prune",
          `DELETE FROM agent_replies WHERE message_id IN (
             SELECT message_id FROM agent_replies WHERE lease_until < $1 LIMIT $2)`,
          [before, limit],
        ),
      ),
  };
}
