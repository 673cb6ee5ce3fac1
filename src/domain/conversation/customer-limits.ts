import { createHash } from "node:crypto";
import { DomainError } from "../errors.js";

/** Counts hits of one key; resolves to the seconds to wait when the key is now over its limit, else 0. */
export interface WriteCounter {
  hit(key: string): Promise<number>;
}

/** The counters of each customer limit (a counter that never refuses where a limit is off). */
export interface CustomerCounters {
  /** New conversations per customer. */
  conversations: WriteCounter;
  /** Messages per customer. */
  messages: WriteCounter;
  /** Ratings set or changed per conversation. */
  ratings: WriteCounter;
}

/** What the customer limits name in their refusals: each limit's count and period, for the message. */
export interface CustomerLimitTerms {
  conversationsPerHour: number;
  messagesPerMinute: number;
  ratingsPerHour: number;
}

function tooMany(what: string, seconds: number): DomainError {
  return new DomainError("resource_exhausted", `${what}; retry after ${seconds} s`, { retryAfterSeconds: seconds });
}

/** A customer as a counter key: the account and its user_id, hashed (any length of user_id fits the key). */
function customerKey(accountId: string, userId: string): string {
  return createHash("sha256").update(accountId).update("\n").update(userId).digest("base64url");
}

/**
 * What one customer may write from the frame: new conversations and messages per customer (an account's `user_id`,
 * whichever chatbot or token it writes with), and rating changes per conversation. Each refusal is
 * `resource_exhausted` with the seconds to wait, and is made before anything is written.
 */
export class CustomerLimits {
  constructor(
    private readonly counters: CustomerCounters,
    private readonly terms: CustomerLimitTerms,
  ) {}

  /** Counts a message about to be stored (and the conversation it starts, when it does). */
  async message(accountId: string, userId: string, starts: boolean): Promise<void> {
    const key = customerKey(accountId, userId);
    let wait = await this.counters.messages.hit(key);
    if (wait) throw tooMany(`at most ${this.terms.messagesPerMinute} messages a minute per customer`, wait);
    if (!starts) return;
    wait = await this.counters.conversations.hit(key);
    if (wait) throw tooMany(`at most ${this.terms.conversationsPerHour} new conversations an hour per customer`, wait);
  }

  /** Counts a rating about to be set or changed. */
  async rating(conversationId: string): Promise<void> {
    const wait = await this.counters.ratings.hit(conversationId);
    if (wait)
      throw tooMany(`a conversation's rating can change at most ${this.terms.ratingsPerHour} times an hour`, wait);
  }
}
