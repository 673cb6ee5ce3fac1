import type { FrameCaller } from "../caller.js";
import { DomainError, invalidArgument } from "../errors.js";
import { requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { optionalContent } from "../validate.js";
import { recordActivity } from "./activity.js";
import type { ConversationCore, ConversationServiceDeps } from "./conversation-core.js";
import type { ConversationRating, ConversationSummary, RatingRepository } from "./repository.js";

/**
 * "How did it go?": the customer rates a closed conversation; the account sees it and receives it as an event. One
 * rating per conversation, which may be changed (a bounded number of times an hour: the customer limits).
 */
export class ConversationRatings {
  constructor(
    /** What the use cases share: this instance's caches, keyed writes, the unit of work of a change. */
    private readonly c: Pick<ConversationCore, "effectiveStatus" | "frameConversation" | "summary">,
    private readonly d: Pick<ConversationServiceDeps, "clock" | "customerLimits" | "log" | "ratings" | "transaction">,
  ) {}

  async rate(caller: FrameCaller, conversationId: string, score: number, comment = ""): Promise<ConversationSummary> {
    const conv = await this.c.frameConversation(caller, requireUuid("conversation_id", conversationId));
    if (!Number.isInteger(score) || score < 1 || score > 5)
      throw invalidArgument("score", "must be a whole number from 1 (bad) to 5 (very good)");
    const text = optionalContent("comment", comment.trim(), LIMITS.ratingComment);
    if (this.c.effectiveStatus(conv) !== "closed")
      throw new DomainError("failed_precondition", "a conversation can be rated once it is closed");
    // One rating per conversation, which may be changed: the same rating again changes nothing and tells nobody.
    const current = (await this.d.ratings.forConversations([conv.conversationId])).get(conv.conversationId);
    if (current && current.score === score && current.comment === text)
      return { ...this.c.summary(conv), rating: current };
    await this.d.customerLimits?.rating(conv.conversationId);
    const rating: ConversationRating = { score, comment: text, ratedAt: this.d.clock.now() };
    const summary = await this.d.transaction(async (tx) => {
      await tx.ratings.set({ conversationId: conv.conversationId, accountId: conv.accountId, ...rating });
      const s = { ...this.c.summary(conv), rating };
      await this.d.log.record(tx, conv.accountId, [
        { type: "conversation.rated", data: { conversationId: conv.conversationId, conversation: s } },
      ]);
      // The timeline's line: by the customer, the score (the comment is the rating's).
      await recordActivity(tx, this.d.log, {
        accountId: conv.accountId,
        conversationId: conv.conversationId,
        kind: "rated",
        actorEmail: "",
        actorName: "Customer",
        fromEmail: "",
        fromName: "",
        toEmail: "",
        toName: "",
        detail: String(score),
        createdAt: rating.ratedAt,
      });
      return s;
    });
    // Watchers and the dispatcher hear of it from the store's announcement of the append.
    return summary;
  }
}

/** The summaries with their ratings, where they have one (one read for the page). */
export async function withRatings(
  ratings: Pick<RatingRepository, "forConversations">,
  summaries: ConversationSummary[],
): Promise<ConversationSummary[]> {
  if (summaries.length === 0) return summaries;
  const found = await ratings.forConversations(summaries.map((s) => s.conversationId));
  return summaries.map((s) => {
    const rating = found.get(s.conversationId);
    return rating ? { ...s, rating } : s;
  });
}
