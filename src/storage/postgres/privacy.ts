import type { PrivacyRepository } from "../../domain/privacy/repository.js";
import { type ContactRow, toContact } from "../conversation-rows.js";
import type { PgDb } from "./db.js";

/** The channel an erasure announces the erased conversations on, so other instances drop what they remember. */
export const ERASURES_CHANNEL = "aiagent_erasures";
/** What replaces the data of an event about an erased contact or an expired conversation. */
const REDACTED = '{"redacted":true}';
/** NOTIFY payloads stop at 8000 bytes: more ids than this travel as an empty payload ("forget everything"). */
const MAX_NOTIFIED = 150;

/** Erasure, export lookups and retention in PostgreSQL; each write method is one unit of work. */
export function pgPrivacy(db: PgDb): PrivacyRepository {
  /** Deletes the conversations' messages and rows and redacts their events; answers (messages, events redacted). */
  const drop = async (accountId: string, ids: string[]): Promise<[number, number]> => {
    if (ids.length === 0) return [0, 0];
    const messages = await db.count("priv_del_messages", "DELETE FROM messages WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_notes", "DELETE FROM conversation_notes WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_mentions", "DELETE FROM note_mentions WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_activity", "DELETE FROM conversation_activity WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_conversations", "DELETE FROM conversations WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_ratings", "DELETE FROM conversation_ratings WHERE conversation_id = ANY($1)", [ids]);
    await db.count("priv_del_replies", "DELETE FROM agent_replies WHERE conversation_id = ANY($1)", [ids]);
    // The queued events first, then the placed ones (a statement of its own, so it sees a placing that committed
    // while the first waited for its rows; sequencer.ts).
    const queued = await db.count(
      "priv_redact_queued_conversations",
      "UPDATE event_queue SET data = $1 WHERE account_id = $2 AND order_key = ANY($3) AND data <> $1",
      [REDACTED, accountId, ids],
    );
    const redacted = await db.count(
      "priv_redact_conversations",
      "UPDATE events SET data = $1 WHERE account_id = $2 AND order_key = ANY($3) AND data <> $1",
      [REDACTED, accountId, ids],
    );
    return [messages, queued + redacted];
  };
  const announce = (ids: string[]) =>
    db.rows("priv_notify", `SELECT pg_notify('${ERASURES_CHANNEL}', $1)`, [
      ids.length > MAX_NOTIFIED ? "" : ids.join(","),
    ]);
  return {
    contact: async (accountId, by) =>
      (
        await ("contactId" in by
          ? db.rows<ContactRow>("priv_contact_id", "SELECT * FROM contacts WHERE account_id = $1 AND contact_id = $2", [
              accountId,
              by.contactId,
            ])
          : db.rows<ContactRow>("priv_contact_user", "SELECT * FROM contacts WHERE account_id = $1 AND user_id = $2", [
              accountId,
              by.userId,
            ]))
      ).map(toContact)[0],
    erase: (c, at) =>
      db.unit(async () => {
        const ids = (
          await db.rows<{ conversation_id: string }>(
            "priv_conv_ids",
            "SELECT conversation_id FROM conversations WHERE contact_id = $1 FOR UPDATE",
            [c.contactId],
          )
        ).map((r) => r.conversation_id);
        const [messages, redacted] = await drop(c.accountId, ids);
        const queuedByUser = await db.count(
          "priv_redact_queued_user",
          "UPDATE event_queue SET data = $1 WHERE account_id = $2 AND (data::jsonb ->> 'userId') = $3 AND data <> $1",
          [REDACTED, c.accountId, c.userId],
        );
        const byUser = await db.count(
          "priv_redact_user",
          "UPDATE events SET data = $1 WHERE account_id = $2 AND (data::jsonb ->> 'userId') = $3 AND data <> $1",
          [REDACTED, c.accountId, c.userId],
        );
        // The access tokens of the customer's sessions outlive the sessions' rows: each session's lineage mark (a
        // random id, nothing of the customer) keeps them refused for the rest of their lives.
        await db.count(
          "priv_mark_sessions",
          `INSERT INTO token_revocations (chatbot_id, user_id, not_before)
             SELECT '', 'session:' || session_id, $3 FROM refresh_tokens WHERE account_id = $1 AND user_id = $2
           ON CONFLICT (chatbot_id, user_id) DO UPDATE SET not_before = greatest(token_revocations.not_before, excluded.not_before)`,
          [c.accountId, c.userId, at],
        );
        await db.count(
          "priv_del_rotations",
          "DELETE FROM refresh_token_rotations WHERE session_id IN (SELECT session_id FROM refresh_tokens WHERE account_id = $1 AND user_id = $2)",
          [c.accountId, c.userId],
        );
        const sessions = await db.count(
          "priv_del_tokens",
          "DELETE FROM refresh_tokens WHERE account_id = $1 AND user_id = $2",
          [c.accountId, c.userId],
        );
        await db.count("priv_del_launch", "DELETE FROM launch_codes WHERE account_id = $1 AND user_id = $2", [
          c.accountId,
          c.userId,
        ]);
        // The customer's e-mails go (they quote the conversation); an unsubscribe is kept, its mail's content blanked.
        if (c.email !== "") {
          const recipient = c.email.trim().toLowerCase();
          await db.count(
            "priv_del_mails",
            "DELETE FROM mail_outbox WHERE account_id = $1 AND recipient = $2 AND unsubscribed_at IS NULL",
            [c.accountId, recipient],
          );
          await db.count(
            "priv_blank_mails",
            "UPDATE mail_outbox SET data = '{}' WHERE account_id = $1 AND recipient = $2",
            [c.accountId, recipient],
          );
        }
        await db.count(
          "priv_del_revocations",
          "DELETE FROM token_revocations WHERE user_id = $1 AND chatbot_id IN (SELECT chatbot_id FROM chatbots WHERE account_id = $2)",
          [c.userId, c.accountId],
        );
        // A keyed write keeps its first answer (the customer's words) for a day: the customer's own keys go, and the
        // account's people's keys whose answer is about one of the erased conversations.
        await db.count(
          "priv_del_frame_keys",
          `DELETE FROM idempotency_keys WHERE owner IN (
             SELECT 'frame:' || $1 || ':' || chatbot_id || ':' || $2 FROM chatbots WHERE account_id = $1)`,
          [c.accountId, c.userId],
        );
        if (ids.length > 0)
          await db.count(
            "priv_del_account_keys",
            `DELETE FROM idempotency_keys WHERE left(owner, length($1)) = $1
               AND EXISTS (SELECT 1 FROM unnest($2::text[]) AS id WHERE position(id IN answer) > 0)`,
            [`account:${c.accountId}:`, ids],
          );
        await db.count("priv_del_contact", "DELETE FROM contacts WHERE contact_id = $1", [c.contactId]);
        // The credential changes the erasure itself recorded name the customer (user:<chatbot>:<user_id>): they
        // stay as changes of the chatbot's credentials, which open streams re-check just the same, and name no one.
        await db.count(
          "priv_anon_changes",
          `UPDATE credential_changes SET subject = 'chatbot:' || split_part(subject, ':', 2)
             WHERE subject IN (SELECT 'user:' || chatbot_id || ':' || $2 FROM chatbots WHERE account_id = $1)`,
          [c.accountId, c.userId],
        );
        await announce(ids);
        return { conversationIds: ids, messages, sessions, eventsRedacted: redacted + queuedByUser + byUser };
      }),
    expireConversations: (chatbotId, before, limit) =>
      db.unit(async () => {
        // The contact's latest conversation goes only with the contact's last one: the contact's copies stay true.
        const rows = await db.rows<{
          conversation_id: string;
          account_id: string;
          contact_id: string;
          unread_count: number;
        }>(
          "priv_expired",
          `SELECT v.conversation_id, v.account_id, v.contact_id, v.unread_count FROM conversations v
             JOIN contacts c ON c.contact_id = v.contact_id
            WHERE v.chatbot_id = $1 AND coalesce(v.last_message_at, v.created_at) < $2
              AND (c.latest_conversation_id IS DISTINCT FROM v.conversation_id
                OR NOT EXISTS (SELECT 1 FROM conversations o WHERE o.contact_id = v.contact_id AND o.conversation_id <> v.conversation_id))
            LIMIT $3 FOR UPDATE OF v`,
          [chatbotId, before, limit],
        );
        if (rows.length === 0) return [];
        const ids = rows.map((r) => r.conversation_id);
        await drop(rows[0]!.account_id, ids);
        for (const r of rows)
          await db.count(
            "priv_unread",
            "UPDATE contacts SET unread_count = greatest(0, unread_count - $1) WHERE contact_id = $2",
            [r.unread_count, r.contact_id],
          );
        // Retention records no event: the account's contact lists learn of it here (ContactRepository.listVersion).
        await db.count(
          "priv_list_version",
          "INSERT INTO contact_versions (account_id, version) VALUES ($1, 1) ON CONFLICT (account_id) DO UPDATE SET version = contact_versions.version + 1",
          [rows[0]!.account_id],
        );
        await db.count(
          "priv_del_empty_contacts",
          "DELETE FROM contacts c WHERE c.contact_id = ANY($1) AND NOT EXISTS (SELECT 1 FROM conversations v WHERE v.contact_id = c.contact_id)",
          [rows.map((r) => r.contact_id)],
        );
        await announce(ids);
        return ids;
      }),
    retentionPolicies: async () =>
      (
        await db.rows(
          "priv_policies",
          "SELECT p.chatbot_id, c.account_id, p.days FROM retention_policies p JOIN chatbots c ON c.chatbot_id = p.chatbot_id",
          [],
        )
      ).map((r) => ({ chatbotId: r.chatbot_id as string, accountId: r.account_id as string, days: Number(r.days) })),
    setRetention: async (chatbotId, days) =>
      void (days === null
        ? await db.count("priv_clear_policy", "DELETE FROM retention_policies WHERE chatbot_id = $1", [chatbotId])
        : await db.count(
            "priv_set_policy",
            "INSERT INTO retention_policies (chatbot_id, days) VALUES ($1, $2) ON CONFLICT (chatbot_id) DO UPDATE SET days = excluded.days",
            [chatbotId, days],
          )),
  };
}
