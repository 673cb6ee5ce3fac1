import type { BulkContact, BulkConversation, BulkLoader, BulkMessage } from "../../domain/bulk.js";
import { searchDocText } from "../../domain/conversation/search.js";
import { contactSearchText } from "../../domain/conversation/search-fold.js";
import type { Db } from "./database.js";
import { ACCOUNT_RANGE } from "./repos/contact-rowid.js";

/** Page cache while loading, in KiB. */
const BULK_CACHE_KB = 192 * 1024;

/**
 * Loads synthetic data fast, for benchmarks: rows go straight into the tables in large transactions, with
 * synchronous=OFF and foreign-key checks off while it runs (the caller builds consistent rows). The triggers
 * still keep the search index. Not for production data: a crash while loading can lose the load.
 */
export class SqliteBulkLoader implements BulkLoader {
  private rowid = 0;
  private readonly contact;
  private readonly conversation;
  private readonly message;
  private readonly rating;
  private readonly nextRowid;
  private readonly saved: { synchronous: number; foreignKeys: number; cacheSize: number };

  constructor(private readonly db: Db) {
    this.saved = {
      synchronous: db.pragma("synchronous", { simple: true }) as number,
      foreignKeys: db.pragma("foreign_keys", { simple: true }) as number,
      cacheSize: db.pragma("cache_size", { simple: true }) as number,
    };
    // Random keys (uuids) land all over their indexes: with the default 2 MB cache every insert would go to disk.
    db.pragma(`cache_size = -${BULK_CACHE_KB}`);
    db.pragma("synchronous = OFF");
    // A rollback journal while loading: pages new to the file are not journaled, where WAL would write every page
    // twice (log, then checkpoint). Still atomic per transaction; the service's open switches back to WAL anyway.
    db.pragma("journal_mode = DELETE");
    db.pragma("foreign_keys = OFF");
    this.contact =
      db.prepare(`INSERT INTO contacts (rowid, contact_id, account_id, user_id, contact_name, email, phone_number, created_at,
        latest_message_at, latest_conversation_id, latest_status, latest_assigned_to, latest_activity_at, unread_count,
        live_activity_at, channels, search_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.conversation =
      db.prepare(`INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at,
        last_message_at, message_count, read_order, unread_count, first_customer_at, first_operator_at, rating_score)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.rating = db.prepare(
      "INSERT INTO conversation_ratings (conversation_id, account_id, score, comment, rated_at) VALUES (?, ?, ?, '', ?)",
    );
    this.message = db.prepare(
      "INSERT INTO messages (message_id, conversation_id, message_order, role, content, tool_calls, documents, " +
        "created_at, chatbot_id, conversation_created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.nextRowid = db.prepare<[number, number], { r: number | null }>(
      "SELECT max(rowid) AS r FROM contacts WHERE rowid BETWEEN ? AND ?",
    );
  }

  /** The first free contact rowid of an account (contacts of one account share a range). */
  private firstContactRowid(accountId: string): number {
    const a = this.db
      .prepare<[string], { rowid: number }>("SELECT rowid FROM accounts WHERE account_id = ?")
      .get(accountId);
    if (!a) throw new Error(`no account ${accountId}`);
    const lo = a.rowid * ACCOUNT_RANGE;
    return (this.nextRowid.get(lo, lo + ACCOUNT_RANGE - 1)?.r ?? lo) + 1;
  }

  /**
   * Runs fn, which adds one account's rows, as one transaction. The per-row search trigger is set aside meanwhile
   * and the account's search rows are written in one statement at the end (a fifth of the time, and one index
   * segment instead of many to merge); being one transaction, a failure leaves neither rows nor a missing trigger.
   */
  loadAccount(accountId: string, fn: () => void): void {
    this.db.transaction(() => {
      const first = this.firstContactRowid(accountId);
      this.rowid = first;
      const trigger = this.db
        .prepare<[], { sql: string }>(
          "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND name = 'contacts_search_insert'",
        )
        .get();
      if (trigger) this.db.exec("DROP TRIGGER contacts_search_insert");
      const lastMessage =
        this.db.prepare<[], { r: number | null }>("SELECT max(rowid) AS r FROM messages").get()?.r ?? 0;
      fn();
      // The account's messages' search words in one statement too (the repositories write them one by one).
      this.db.function("aiagent_search_doc", { deterministic: true }, (t) => searchDocText(String(t)));
      this.db
        .prepare(
          "INSERT INTO message_search (rowid, terms) SELECT rowid, aiagent_search_doc(content) FROM messages WHERE rowid > ?",
        )
        .run(lastMessage);
      this.db
        .prepare(
          "INSERT INTO contact_search (rowid, search_text) SELECT rowid, search_text FROM contacts WHERE rowid " +
            "BETWEEN ? AND ?",
        )
        .run(first, Math.floor(first / ACCOUNT_RANGE) * ACCOUNT_RANGE + ACCOUNT_RANGE - 1);
      if (trigger) this.db.exec(trigger.sql);
    })();
  }

  addContact(accountId: string, c: BulkContact): void {
    this.contact.run(
      this.rowid++,
      c.contactId,
      accountId,
      c.userId,
      c.contactName,
      c.email,
      c.phoneNumber,
      c.createdAt,
      c.latestMessageAt,
      c.latestConversationId,
      c.latestStatus,
      c.latestAssignedTo,
      c.latestActivityAt,
      c.unreadCount,
      c.liveActivityAt,
      c.channels,
      contactSearchText(c),
    );
  }

  addConversation(accountId: string, v: BulkConversation): void {
    this.conversation.run(
      v.conversationId,
      accountId,
      v.chatbotId,
      v.contactId,
      v.channel,
      v.status,
      v.assignedTo,
      v.createdAt,
      v.lastMessageAt,
      v.messageCount,
      v.readOrder,
      v.unreadCount,
      v.firstCustomerAt,
      v.firstOperatorAt,
      v.ratingScore,
    );
    if (v.ratingScore !== null) this.rating.run(v.conversationId, accountId, v.ratingScore, v.lastMessageAt);
  }

  addMessage(m: BulkMessage): void {
    this.message.run(
      m.messageId,
      m.conversationId,
      m.messageOrder,
      m.role,
      m.content,
      m.toolCalls ?? "",
      m.documents ?? "[]",
      m.createdAt,
      m.chatbotId,
      m.conversationCreatedAt,
    );
  }

  /** Restores the settings (WAL again) and refreshes the planner's statistics. */
  finish(): void {
    this.db.pragma(`foreign_keys = ${this.saved.foreignKeys}`);
    this.db.pragma(`synchronous = ${this.saved.synchronous}`);
    this.db.pragma(`cache_size = ${this.saved.cacheSize}`);
    this.db.pragma("optimize");
    this.db.pragma("journal_mode = WAL");
  }
}
