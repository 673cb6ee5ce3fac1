import { ReplyClaimLost, type ReplyRepository } from "../../../domain/conversation/replies.js";
import { type ReplyRow, toReplyClaim } from "../../reply-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Claims of the agent's replies in SQLite: one row per customer message, taken by one conditional write. */
export function sqliteReplies(db: Db): Sync<ReplyRepository> {
  const open = db.prepare(
    "INSERT INTO agent_replies (message_id, conversation_id, claim, lease_until, reply_order) VALUES (?, ?, ?, ?, NULL)",
  );
  // Taken when there is no row, or its claim has no reply and its lease ended: one statement decides.
  const take = db.prepare(
    `INSERT INTO agent_replies (message_id, conversation_id, claim, lease_until, reply_order) VALUES (?, ?, ?, ?, NULL)
     ON CONFLICT (message_id) DO UPDATE SET claim = excluded.claim, lease_until = excluded.lease_until
       WHERE agent_replies.reply_order IS NULL AND agent_replies.lease_until <= ?`,
  );
  const find = db.prepare<[string], ReplyRow>("SELECT * FROM agent_replies WHERE message_id = ?");
  const renew = db.prepare(
    "UPDATE agent_replies SET lease_until = ? WHERE message_id = ? AND claim = ? AND reply_order IS NULL",
  );
  const release = db.prepare(
    "UPDATE agent_replies SET lease_until = 0 WHERE message_id = ? AND claim = ? AND reply_order IS NULL",
  );
  const complete = db.prepare(
    "UPDATE agent_replies SET reply_order = ? WHERE message_id = ? AND claim = ? AND reply_order IS NULL",
  );
  const prune = db.prepare(
    "DELETE FROM agent_replies WHERE message_id IN (SELECT message_id FROM agent_replies WHERE lease_until < ? LIMIT ?)",
  );
  return {
    open: (c) => void open.run(c.messageId, c.conversationId, c.claim, c.leaseUntil),
    take: (c, now) => take.run(c.messageId, c.conversationId, c.claim, c.leaseUntil, now).changes === 1,
    find: (messageId) => {
      const r = find.get(messageId);
      return r && toReplyClaim(r);
    },
    renew: (messageId, claim, leaseUntil) => renew.run(leaseUntil, messageId, claim).changes === 1,
    release: (messageId, claim) => void release.run(messageId, claim),
    complete: (messageId, claim, replyOrder) => {
      if (complete.run(replyOrder, messageId, claim).changes !== 1) throw new ReplyClaimLost();
    },
    prune: (before, limit) => prune.run(before, limit).changes,
  };
}
