/**
 * The AI agent's reply to one customer message, claimed in storage: at most one claim holds a message at a time, so
 * one message gets one model call and one stored reply, whichever instance its retries reach.
 */
export interface ReplyClaim {
  /** The customer's message being answered. */
  messageId: string;
  conversationId: string;
  /** The claimant's random token: only it may renew, release or complete the claim. */
  claim: string;
  /** Until when the claim holds without renewal (ms since the epoch); after it, another caller may take it over. */
  leaseUntil: number;
  /** The reply's message_order once stored; null while it is being produced (or after a failure). */
  replyOrder: number | null;
}

/** A claim to record: who claims which message's reply, until when. */
export type NewReplyClaim = Omit<ReplyClaim, "replyOrder">;

/** Where reply claims are kept (one row per answered customer message; erased with its conversation). */
export interface ReplyRepository {
  /** Records the claim of a message stored in this same unit of work (its id is fresh: nothing can hold it yet). */
  open(c: NewReplyClaim): Promise<void>;
  /**
   * Takes the reply of a message: records the claim when there is none, or takes over one with no reply whose
   * lease ended before `now`. True when `c` now holds it; false when another claim does, or the reply exists.
   */
  take(c: NewReplyClaim, now: number): Promise<boolean>;
  /** The message's claim, if any. */
  find(messageId: string): Promise<ReplyClaim | undefined>;
  /** Extends a held claim's lease; false when `claim` no longer holds it. */
  renew(messageId: string, claim: string, leaseUntil: number): Promise<boolean>;
  /** Gives up a held claim with no reply (its lease ends now): the next retry takes it at once. */
  release(messageId: string, claim: string): Promise<void>;
  /**
   * Records the stored reply, in the reply's unit of work. When `claim` no longer holds the message the unit fails
   * with ReplyClaimLost and is rolled back (another claimant answers it): at once, or at the latest at its commit (a
   * store may send the statement with the COMMIT).
   */
  complete(messageId: string, claim: string, replyOrder: number): Promise<void>;
  /** Drops up to `limit` claims whose lease ended before `before` (answered or given up); answers the count. */
  prune(before: number, limit: number): Promise<number>;
}

/** How long a claim holds without renewal: the time an instance may stall (or be dead) before a retry takes over. */
export const REPLY_LEASE_MS = 10_000;
/** How often a claimant renews its lease while the model answers. */
export const REPLY_RENEW_MS = 3_000;
/** How long a retry waits for another claimant's reply before answering `unavailable` (retry later). */
export const REPLY_WAIT_MS = 60_000;

/** A reply's claim was taken over by another claimant before the reply was stored (ReplyRepository.complete). */
export class ReplyClaimLost extends Error {
  override readonly name = "ReplyClaimLost";
}
