import type { ReplyClaim } from "../domain/conversation/replies.js";

/** A row of `agent_replies`, the same on both back ends. */
export interface ReplyRow {
  message_id: string;
  conversation_id: string;
  claim: string;
  lease_until: number | string;
  reply_order: number | string | null;
}

/** The row as the domain's claim (PostgreSQL may hand a bigint over as a string). */
export const toReplyClaim = (r: ReplyRow): ReplyClaim => ({
  messageId: r.message_id,
  conversationId: r.conversation_id,
  claim: r.claim,
  leaseUntil: Number(r.lease_until),
  replyOrder: r.reply_order === null ? null : Number(r.reply_order),
});
