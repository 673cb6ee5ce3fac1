/** A contact as an erasure or an export finds it. */
export interface ContactRecord {
  contactId: string;
  accountId: string;
  userId: string;
  contactName: string;
  email: string;
  phoneNumber: string;
  createdAt: number;
}

/** What an erasure removed. */
export interface ErasedCounts {
  /** The ids of the conversations deleted (for the caches that remember them). */
  conversationIds: string[];
  messages: number;
  sessions: number;
  eventsRedacted: number;
}

/** Storage of what erasure, export and retention need beyond the other repositories. */
export interface PrivacyRepository {
  /** The account's contact by its id or by the client's user_id (another account's is undefined). */
  contact(accountId: string, by: { contactId: string } | { userId: string }): Promise<ContactRecord | undefined>;
  /**
   * Deletes the contact with its conversations, messages, sessions (refresh tokens and their rotations) and launch
   * codes, and redacts the account's events about it (their data becomes `{"redacted":true}`, so pending webhook
   * deliveries carry nothing of it). Each of the customer's sessions leaves a lineage mark (`session:<id>` under the
   * chatbot id "", as of `at`; a random id, nothing of the customer), so an access token issued before the erasure
   * stays refused for the rest of its life and cannot recreate the contact. Where
   * instances share the store, the others are told the conversation ids once it commits
   * (`Store.onConversationsErased`).
   */
  erase(c: ContactRecord, at: number): Promise<ErasedCounts>;
  /**
   * Deletes up to `limit` conversations of the chatbot whose last activity is before `before`, with their messages,
   * redacting their events; contacts left with no conversation keep their profile. Answers the deleted ids.
   */
  expireConversations(chatbotId: string, before: number, limit: number): Promise<string[]>;
  /** The chatbots with a retention period: id, account and days. */
  retentionPolicies(): Promise<{ chatbotId: string; accountId: string; days: number }[]>;
  /** Sets (days > 0) or clears (null) the chatbot's retention period. */
  setRetention(chatbotId: string, days: number | null): Promise<void>;
}
