import type { ContactRecord, PrivacyRepository } from "../../../domain/privacy/repository.js";
import { type ContactRow, toContact } from "../../conversation-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** What replaces the data of an event about an erased contact or an expired conversation. */
export const REDACTED = '{"redacted":true}';

/** Erasure, export lookups and retention in SQLite; each write method is one transaction (a savepoint inside one). */
export function sqlitePrivacy(db: Db): Sync<PrivacyRepository> {
  const byId = db.prepare<[string, string], ContactRow>(
    "SELECT * FROM contacts WHERE account_id = ? AND contact_id = ?",
  );
  const byUser = db.prepare<[string, string], ContactRow>(
    "SELECT * FROM contacts WHERE account_id = ? AND user_id = ?",
  );
  const convIds = db.prepare<[string], { conversation_id: string }>(
    "SELECT conversation_id FROM conversations WHERE contact_id = ?",
  );
  const delMessages = db.prepare("DELETE FROM messages WHERE conversation_id = ?");
  const delNotes = db.prepare("DELETE FROM conversation_notes WHERE conversation_id = ?");
  const delMentions = db.prepare("DELETE FROM note_mentions WHERE conversation_id = ?");
  const delActivity = db.prepare("DELETE FROM conversation_activity WHERE conversation_id = ?");
  const delConversation = db.prepare("DELETE FROM conversations WHERE conversation_id = ?");
  const delRating = db.prepare("DELETE FROM conversation_ratings WHERE conversation_id = ?");
  const delReplies = db.prepare("DELETE FROM agent_replies WHERE conversation_id = ?");
  const redactConversation = db.prepare(
    "UPDATE events SET data = ? WHERE account_id = ? AND order_key = ? AND data <> ?",
  );
  const redactUser = db.prepare(
    "UPDATE events SET data = ? WHERE account_id = ? AND json_extract(data, '$.userId') = ? AND data <> ?",
  );
  const sessions = db.prepare<[string, string], { session_id: string }>(
    "SELECT session_id FROM refresh_tokens WHERE account_id = ? AND user_id = ?",
  );
  const delRotations = db.prepare("DELETE FROM refresh_token_rotations WHERE session_id = ?");
  const delTokens = db.prepare("DELETE FROM refresh_tokens WHERE account_id = ? AND user_id = ?");
  const delLaunchCodes = db.prepare("DELETE FROM launch_codes WHERE account_id = ? AND user_id = ?");
  // The customer's e-mails go (they quote the conversation); an unsubscribe is kept, its mail's content blanked.
  const delMails = db.prepare(
    "DELETE FROM mail_outbox WHERE account_id = ? AND recipient = ? AND unsubscribed_at IS NULL",
  );
  const blankMails = db.prepare("UPDATE mail_outbox SET data = '{}' WHERE account_id = ? AND recipient = ?");
  const delRevocations = db.prepare(
    "DELETE FROM token_revocations WHERE user_id = ? AND chatbot_id IN (SELECT chatbot_id FROM chatbots WHERE account_id = ?)",
  );
  // The access tokens of the customer's sessions outlive the sessions' rows: each session's lineage mark (a random id,
  // nothing of the customer) keeps them refused for the rest of their lives.
  const markSession = db.prepare(
    "INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES ('', 'session:' || ?, ?) " +
      "ON CONFLICT (chatbot_id, user_id) DO UPDATE SET not_before = max(not_before, excluded.not_before)",
  );
  const delContact = db.prepare("DELETE FROM contacts WHERE contact_id = ?");
  // The credential changes the erasure itself recorded name the customer (user:<chatbot>:<user_id>): they stay as
  // changes of the chatbot's credentials, which open streams re-check just the same, and name no one.
  const anonymiseChanges = db.prepare(
    "UPDATE credential_changes SET subject = 'chatbot:' || substr(subject, 6, 36) " +
      "WHERE subject IN (SELECT 'user:' || chatbot_id || ':' || ? FROM chatbots WHERE account_id = ?)",
  );
  // A keyed write keeps its first answer (the customer's words) for a day: the customer's own keys go, and the
  // account's people's keys whose answer is about one of the erased conversations.
  const delFrameKeys = db.prepare(
    "DELETE FROM idempotency_keys WHERE owner IN (SELECT 'frame:' || ? || ':' || chatbot_id || ':' || ? FROM chatbots WHERE account_id = ?)",
  );
  const delAccountKeys = db.prepare(
    // The owners "account:<id>:…" as a range of the primary key (";" follows ":"), so no scan of the table.
    "DELETE FROM idempotency_keys WHERE owner > ? AND owner < ? AND instr(answer, ?) > 0",
  );
  // The contact's latest conversation goes only with the contact's last one: the contact's copies of it stay true.
  const expired = db.prepare<
    [string, number, number],
    { conversation_id: string; account_id: string; contact_id: string; unread_count: number }
  >(
    `SELECT v.conversation_id, v.account_id, v.contact_id, v.unread_count FROM conversations v
       JOIN contacts c ON c.contact_id = v.contact_id
      WHERE v.chatbot_id = ? AND coalesce(v.last_message_at, v.created_at) < ?
        AND (c.latest_conversation_id IS NOT v.conversation_id
          OR NOT EXISTS (SELECT 1 FROM conversations o WHERE o.contact_id = v.contact_id AND o.conversation_id <> v.conversation_id))
      LIMIT ?`,
  );
  const remaining = db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM conversations WHERE contact_id = ?");
  const unread = db.prepare("UPDATE contacts SET unread_count = max(0, unread_count - ?) WHERE contact_id = ?");
  const policies = db.prepare<[], { chatbot_id: string; account_id: string; days: number }>(
    "SELECT p.chatbot_id, c.account_id, p.days FROM retention_policies p JOIN chatbots c ON c.chatbot_id = p.chatbot_id",
  );
  const setPolicy = db.prepare(
    "INSERT INTO retention_policies (chatbot_id, days) VALUES (?, ?) ON CONFLICT (chatbot_id) DO UPDATE SET days = excluded.days",
  );
  const clearPolicy = db.prepare("DELETE FROM retention_policies WHERE chatbot_id = ?");

  const dropConversation = (accountId: string, conversationId: string): { messages: number; redacted: number } => {
    const messages = delMessages.run(conversationId).changes;
    delNotes.run(conversationId);
    delMentions.run(conversationId);
    delActivity.run(conversationId);
    delConversation.run(conversationId);
    delRating.run(conversationId);
    delReplies.run(conversationId);
    return { messages, redacted: redactConversation.run(REDACTED, accountId, conversationId, REDACTED).changes };
  };

  const erase = db.transaction((c: ContactRecord, at: number) => {
    const conversationIds = convIds.all(c.contactId).map((r) => r.conversation_id);
    let messages = 0;
    let eventsRedacted = 0;
    for (const id of conversationIds) {
      const d = dropConversation(c.accountId, id);
      messages += d.messages;
      eventsRedacted += d.redacted;
    }
    eventsRedacted += redactUser.run(REDACTED, c.accountId, c.userId, REDACTED).changes;
    for (const s of sessions.all(c.accountId, c.userId)) {
      delRotations.run(s.session_id);
      markSession.run(s.session_id, at);
    }
    const sessionCount = delTokens.run(c.accountId, c.userId).changes;
    delLaunchCodes.run(c.accountId, c.userId);
    if (c.email !== "") {
      delMails.run(c.accountId, c.email.trim().toLowerCase());
      blankMails.run(c.accountId, c.email.trim().toLowerCase());
    }
    delRevocations.run(c.userId, c.accountId);
    delFrameKeys.run(c.accountId, c.userId, c.accountId);
    for (const id of conversationIds) delAccountKeys.run(`account:${c.accountId}:`, `account:${c.accountId};`, id);
    delContact.run(c.contactId);
    anonymiseChanges.run(c.userId, c.accountId);
    return { conversationIds, messages, sessions: sessionCount, eventsRedacted };
  });

  // Retention records no event: the account's contact lists learn of it here (ContactRepository.listVersion).
  const bumpVersion = db.prepare(
    "INSERT INTO contact_versions (account_id, version) VALUES (?, 1) ON CONFLICT (account_id) DO UPDATE SET version = version + 1",
  );

  const expire = db.transaction((chatbotId: string, before: number, limit: number) => {
    const rows = expired.all(chatbotId, before, limit);
    if (rows.length > 0) bumpVersion.run(rows[0]!.account_id);
    for (const r of rows) {
      dropConversation(r.account_id, r.conversation_id);
      if (remaining.get(r.contact_id)!.n === 0) delContact.run(r.contact_id);
      else unread.run(r.unread_count, r.contact_id);
    }
    return rows.map((r) => r.conversation_id);
  });

  return {
    contact: (accountId, by) => {
      const r = "contactId" in by ? byId.get(accountId, by.contactId) : byUser.get(accountId, by.userId);
      return r && toContact(r);
    },
    erase: (c, at) => erase(c, at),
    expireConversations: (chatbotId, before, limit) => expire(chatbotId, before, limit),
    retentionPolicies: () =>
      policies.all().map((p) => ({ chatbotId: p.chatbot_id, accountId: p.account_id, days: p.days })),
    setRetention: (chatbotId, days) =>
      void (days === null ? clearPolicy.run(chatbotId) : setPolicy.run(chatbotId, days)),
  };
}
