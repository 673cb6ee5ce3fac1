import type { KnowledgeSnippet } from "../../domain/account/repository.js";
import {
  type ContactQuery,
  type ContactRepository,
  type ConversationPreview,
  type ConversationRecord,
  type ConversationRepository,
  type MessageAttachment,
  type MessageRecord,
  type MessageRole,
  type NewConversation,
  type NewMessage,
  PREVIEW_LENGTH,
  type StoredContact,
} from "../../domain/conversation/repository.js";
import type { MessageEffect } from "../../domain/conversation/rules.js";
import { searchDocText } from "../../domain/conversation/search.js";
import { contactSearchText } from "../../domain/conversation/search-fold.js";
import { newId } from "../../domain/ids.js";
import {
  type ConversationRow,
  PREVIEW_COLUMNS,
  PREVIEW_JOINS,
  type PreviewRow,
  toConversation,
  toPreview,
} from "../conversation-rows.js";
import type { PgDb } from "./db.js";
import { heldSnoozeKey } from "./timers.js";
import { heldEndpointsKey } from "./webhooks.js";

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toMsg = (r: Row, conversationId: string, conversationCreatedAt: number): MessageRecord => ({
  messageId: r.message_id as string,
  conversationId,
  conversationCreatedAt,
  messageOrder: Number(r.message_order),
  role: r.role as MessageRole,
  content: r.content as string,
  toolCalls: r.tool_calls as string,
  documents: JSON.parse(r.documents as string) as KnowledgeSnippet[],
  createdAt: Number(r.created_at),
  ...(r.attachments === "[]" ? {} : { attachments: JSON.parse(r.attachments as string) as MessageAttachment[] }),
  ...(r.author_name ? { authorName: r.author_name as string } : {}),
});

const CONV = "SELECT v.*, c.user_id FROM conversations v JOIN contacts c ON c.contact_id = v.contact_id";
const MSG =
  "SELECT message_id, message_order, role, content, tool_calls, documents, created_at, attachments, author_name FROM messages";
// After a status change: the live activity over all the contact's conversations, and the copy of the latest
// conversation's state only when the changed one ($2) is the latest (an older one's change must not show).
const STATUS_CONTACT = `UPDATE contacts SET
    live_activity_at = (SELECT max(coalesce(last_message_at, created_at)) FROM conversations WHERE contact_id = $1 AND status = 'live'),
    latest_status = CASE WHEN latest_conversation_id = $2 THEN $3::text ELSE latest_status END,
    latest_activity_at = CASE WHEN latest_conversation_id = $2 THEN $4::bigint ELSE latest_activity_at END
  WHERE contact_id = $1`;

const heldKey = (conversationId: string) => `conversation:${conversationId}`;

/**
 * A message append in one round trip. The conversation's row is updated first and stays locked to the commit, so
 * writers on any instance take the next message_order in turn (gap-free); the contact's row second, as every write
 * takes them (the other order deadlocks). The conversation as this write left it (its last activity) is copied
 * to the contact for the list, and returned, with the account's webhook endpoints (the event of the message needs
 * them next: one round trip fewer). The report's facts ride along: the earliest customer and operator message
 * (least, not the first written: two sends may commit in the other order than their instants) and the latest
 * activity (greatest and least skip NULL).
 */
const APPEND = `WITH bump AS (
    UPDATE conversations SET message_count = message_count + 1, last_message_at = greatest(last_message_at, $1),
      unread_count = unread_count + $2, status = CASE WHEN $3 THEN 'live' ELSE status END,
      first_customer_at = CASE WHEN $6 = 'user' THEN least(first_customer_at, $1) ELSE first_customer_at END,
      first_operator_at = CASE WHEN $6 = 'operator' THEN least(first_operator_at, $1) ELSE first_operator_at END
    WHERE conversation_id = $4 RETURNING *
  ), msg AS (
    INSERT INTO messages (message_id, conversation_id, message_order, role, content, tool_calls, documents, created_at,
      chatbot_id, conversation_created_at, attachments, search_words, author_name)
    SELECT $5, $4, b.message_count, $6, $7, $8, $9, $1, b.chatbot_id, b.created_at, $10, to_tsvector('simple', $11), $12
    FROM bump b
  ), touch AS (
    UPDATE contacts c SET
      latest_message_at = greatest(coalesce(c.latest_message_at, 0), $1),
      latest_conversation_id = $4,
      latest_status = b.status,
      latest_assigned_to = b.assigned_to,
      latest_activity_at = b.last_message_at,
      unread_count = c.unread_count + $2,
      live_activity_at = CASE WHEN b.status = 'live' THEN greatest(coalesce(c.live_activity_at, 0), $1) ELSE c.live_activity_at END,
      channels = CASE WHEN position(',' || b.channel || ',' in ',' || c.channels || ',') > 0 THEN c.channels
                      WHEN c.channels = '' THEN b.channel ELSE c.channels || ',' || b.channel END
    FROM bump b WHERE c.contact_id = b.contact_id RETURNING c.user_id
  )
  SELECT b.*, t.user_id,
    (SELECT coalesce(json_agg(w ORDER BY w.created_at, w.endpoint_id), '[]') FROM webhook_endpoints w WHERE w.account_id = b.account_id) AS endpoints
  FROM bump b, touch t`;

/** Conversations and messages; each write is one transaction that also keeps the contact's aggregates. */
export function pgConversations(db: PgDb): ConversationRepository {
  /** The message appended, and the conversation as the append left it (its row from the append's RETURNING). */
  const append = (
    conversationId: string,
    m: NewMessage,
    effect: MessageEffect,
    start: NewConversation | undefined,
  ): Promise<{ message: MessageRecord; conversation: ConversationRecord }> =>
    db.unit(async () => {
      if (start) {
        const [contact] = await db.rows(
          "conv_ensure_contact",
          `INSERT INTO contacts (contact_id, account_id, user_id, created_at, search_text) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (account_id, user_id) DO UPDATE SET user_id = contacts.user_id RETURNING contact_id`,
          [
            newId(),
            start.accountId,
            start.userId,
            m.createdAt,
            contactSearchText({ userId: start.userId, contactName: "", email: "", phoneNumber: "" }),
          ],
        );
        await db.write(
          "conv_insert",
          "INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
          [
            start.conversationId,
            start.accountId,
            start.chatbotId,
            contact!.contact_id,
            start.channel,
            start.status,
            start.assignedTo,
            m.createdAt,
          ],
        );
      }
      const [conv] = await db.rows<ConversationRow & { endpoints: unknown; snoozed_until: unknown }>(
        "conv_append",
        APPEND,
        [
          m.createdAt,
          effect.unread ? 1 : 0,
          effect.reopens,
          conversationId,
          m.messageId,
          m.role,
          m.content,
          m.toolCalls,
          JSON.stringify(m.documents),
          JSON.stringify(m.attachments ?? []),
          searchDocText(m.content),
          m.authorName ?? "",
        ],
      );
      if (!conv) throw new Error(`conversation ${conversationId} vanished`);
      const order = Number(conv.message_count);
      // The row stays locked to the commit: the domain's read of it right after is answered from here.
      const conversation = toConversation(conv);
      db.held?.set(heldKey(conversationId), conversation);
      db.held?.set(heldEndpointsKey(conv.account_id), conv.endpoints);
      db.held?.set(heldSnoozeKey(conversationId), conv.snoozed_until ?? null);
      return {
        message: { ...m, conversationId, conversationCreatedAt: Number(conv.created_at), messageOrder: order },
        // A copy: the held record is answered again (byId copies it too).
        conversation: { ...conversation },
      };
    });
  return {
    previews: async (ids) => {
      const out = new Map<string, ConversationPreview>();
      if (ids.length === 0) return out;
      const rows = await db.rows<PreviewRow>(
        "conv_previews",
        `SELECT ${PREVIEW_COLUMNS}, left(m.content, ${PREVIEW_LENGTH}) AS content
          FROM conversations c
          ${PREVIEW_JOINS}
          WHERE c.conversation_id = ANY($1::text[])`,
        [ids],
      );
      for (const r of rows) out.set(r.conversation_id, toPreview(r));
      return out;
    },
    byId: async (id) => {
      const held = db.held?.get(heldKey(id)) as ConversationRecord | undefined;
      if (held) return { ...held };
      return (await db.rows<ConversationRow>("conv_by_id", `${CONV} WHERE v.conversation_id = $1`, [id])).map(
        toConversation,
      )[0];
    },
    append: async (conversationId, m, effect, start) => (await append(conversationId, m, effect, start)).message,
    appendAndRead: (conversationId, m, effect, start) => append(conversationId, m, effect, start),
    // message_order is gap-free from 1, so "skip offset" is a range on the unique index, not an OFFSET scan.
    messages: async (conv, limit, offset) => {
      const rows = await db.rows(
        "msg_page",
        `${MSG} WHERE conversation_id = $1 AND message_order > $2 ORDER BY message_order LIMIT $3`,
        [conv.conversationId, offset, limit + 1],
      );
      return {
        messages: rows.slice(0, limit).map((r) => toMsg(r, conv.conversationId, conv.createdAt)),
        hasMore: rows.length > limit,
      };
    },
    messageCount: async (id) =>
      (
        await db.rows<{ message_count: number }>(
          "conv_message_count",
          "SELECT message_count FROM conversations WHERE conversation_id = $1",
          [id],
        )
      )[0]?.message_count,
    recent: async (conv, count) =>
      (
        await db.rows("msg_recent", `${MSG} WHERE conversation_id = $1 ORDER BY message_order DESC LIMIT $2`, [
          conv.conversationId,
          count,
        ])
      )
        .reverse()
        .map((r) => toMsg(r, conv.conversationId, conv.createdAt)),
    forUser: async (accountId, chatbotId, userId, limit) =>
      (
        await db.rows<ConversationRow>(
          "conv_for_user",
          `${CONV} WHERE c.account_id = $1 AND c.user_id = $2 AND v.chatbot_id = $3 ORDER BY v.created_at DESC, v.conversation_id DESC LIMIT $4`,
          [accountId, userId, chatbotId, limit],
        )
      ).map(toConversation),
    forContact: async (contactId, limit, offset) => {
      const rows = await db.rows<ConversationRow>(
        "conv_for_contact",
        `${CONV} WHERE v.contact_id = $1 ORDER BY v.created_at DESC, v.conversation_id DESC LIMIT $2 OFFSET $3`,
        [contactId, limit + 1, offset],
      );
      return { conversations: rows.slice(0, limit).map(toConversation), hasMore: rows.length > limit };
    },
    // The conversation's row first, the contact's second, as every message write takes them: the other order
    // deadlocks with a concurrent message (PostgreSQL then aborts one of the two).
    markRead: (id) =>
      db.unit(async () => {
        db.held?.delete(heldKey(id));
        const [r] = await db.rows<{ contact_id: string; was: number }>(
          "conv_read_all",
          `UPDATE conversations v SET unread_count = 0, read_order = v.message_count
           FROM (SELECT unread_count FROM conversations WHERE conversation_id = $1 FOR UPDATE) AS before
           WHERE v.conversation_id = $1 RETURNING v.contact_id, before.unread_count AS was`,
          [id],
        );
        if (r && r.was > 0)
          await db.count(
            "conv_unread_off",
            "UPDATE contacts SET unread_count = unread_count - $2 WHERE contact_id = $1",
            [r.contact_id, r.was],
          );
      }),
    // The conversation's row first, then the contact's, as markRead. Only when no customer message is unread yet.
    markUnread: (id) =>
      db.unit(async () => {
        db.held?.delete(heldKey(id));
        const [r] = await db.rows<{ contact_id: string }>(
          "conv_unread_one",
          `UPDATE conversations v SET unread_count = 1, read_order = last.message_order - 1
           FROM (SELECT m.message_order FROM conversations c JOIN messages m ON m.conversation_id = c.conversation_id
                 WHERE c.conversation_id = $1 AND m.role = 'user' ORDER BY m.message_order DESC LIMIT 1
                 FOR UPDATE OF c) AS last
           WHERE v.conversation_id = $1 AND v.read_order >= last.message_order RETURNING v.contact_id`,
          [id],
        );
        if (r)
          await db.count(
            "conv_unread_on",
            "UPDATE contacts SET unread_count = unread_count + 1 WHERE contact_id = $1",
            [r.contact_id],
          );
      }),
    // One statement: the contact's copy changes only when the conversation is its latest.
    assign: async (id, assignee, operatorName) => {
      db.held?.delete(heldKey(id));
      await db.count(
        "conv_assign",
        `WITH v AS (UPDATE conversations SET assigned_to = $1, operator_name = $2 WHERE conversation_id = $3 RETURNING contact_id)
         UPDATE contacts c SET latest_assigned_to = $1 FROM v WHERE c.contact_id = v.contact_id AND c.latest_conversation_id = $3`,
        [assignee, operatorName, id],
      );
    },
    setStatus: (id, status, now) =>
      db.unit(async () => {
        db.held?.delete(heldKey(id));
        const [r] = await db.rows(
          "conv_status",
          `UPDATE conversations SET status = $1, last_message_at = coalesce(last_message_at, $2) WHERE conversation_id = $3
           RETURNING contact_id, status, coalesce(last_message_at, created_at) AS activity`,
          [status, now, id],
        );
        if (r) await db.count("contact_status", STATUS_CONTACT, [r.contact_id, id, r.status, r.activity]);
      }),
  };
}

/** A LIKE pattern matching the term literally anywhere (% _ and \ are ordinary characters). */
export function containsPattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * What a filter says of a snoozed latest conversation: unread and live leave it out (it left the open views until it
 * wakes), snoozed lists only those; a lookup of the latest conversation by its key.
 */
function snoozeWhere(filter: ContactQuery["filter"]): string {
  const asleep =
    "EXISTS (SELECT 1 FROM conversations z WHERE z.conversation_id = c.latest_conversation_id AND z.snoozed_until IS NOT NULL)";
  if (filter === "snoozed") return ` AND ${asleep}`;
  if (filter === "unread" || filter === "live") return ` AND NOT ${asleep}`;
  return "";
}

/**
 * One page of the list: newest first on the filter's partial index; a search tests the stored folded text, which the
 * trigram GIN index answers when the term is rare. `live` reads closed once idle: live_activity_at <=
 * latest_message_at always, so the newest-first scan can stop at liveSince.
 */
export function contactListQuery(q: ContactQuery): { name: string; text: string; values: unknown[] } {
  const values: unknown[] = [q.accountId, q.limit + 1, q.offset];
  let where = "";
  if (q.filter === "unread") where += " AND c.unread_count > 0";
  if (q.filter === "live") {
    values.push(q.liveSince);
    const p = `$${values.length}`;
    where += ` AND c.live_activity_at IS NOT NULL AND c.live_activity_at >= ${p} AND c.latest_message_at >= ${p}`;
  }
  if (q.assignee !== null) {
    values.push(q.assignee);
    where += ` AND lower(c.latest_assigned_to) = $${values.length}`;
  }
  if (q.search !== "") {
    values.push(containsPattern(q.search));
    where += ` AND c.search_text LIKE $${values.length}`;
  }
  where += snoozeWhere(q.filter);
  if (q.labelId) {
    values.push(q.labelId);
    where += ` AND EXISTS (SELECT 1 FROM conversation_labels l WHERE l.conversation_id = c.latest_conversation_id AND l.label_id = $${values.length})`;
  }
  const hidden = q.hiddenChatbots !== undefined && q.hiddenChatbots.length > 0;
  if (hidden) {
    // An operator's teams do not see these chatbots: a contact whose latest conversation is of one is left out.
    values.push(q.hiddenChatbots);
    where += ` AND NOT EXISTS (SELECT 1 FROM conversations v WHERE v.conversation_id = c.latest_conversation_id
      AND v.chatbot_id = ANY($${values.length}::text[]))`;
  }
  // The latest conversation's status, assignee and activity are copies on the contact row (migration 6): a listed
  // row costs no lookup of its conversation.
  const text = `SELECT c.contact_id, c.user_id, c.contact_name, c.phone_number, c.email, c.unread_count, c.latest_message_at,
      c.channels, c.latest_conversation_id, c.latest_status, c.latest_assigned_to, c.latest_activity_at, c.live_activity_at
    FROM contacts c
    WHERE c.account_id = $1 AND c.latest_message_at IS NOT NULL${where}
    ORDER BY c.latest_message_at DESC, c.contact_id LIMIT $2 OFFSET $3`;
  const view = (q.assignee === null ? "" : "_assignee") + (q.labelId ? "_label" : "");
  const teams = hidden ? "_teams" : "";
  return { name: `contact_list_${q.filter}${view}${teams}_${q.search === "" ? "plain" : "search"}`, text, values };
}

/** The contact columns an upsert answers. */
export const CONTACT = "contact_id, user_id, contact_name, email, phone_number, search_text";

/** The search text a contact row's fields fold to (contactSearchText), to compare with the one it stores. */
export function foldedSearchText(r: Row): string {
  return contactSearchText({
    userId: r.user_id as string,
    contactName: r.contact_name as string,
    email: r.email as string,
    phoneNumber: r.phone_number as string,
  });
}

/** An upsert's profile merged into the stored contact: each field given (not '') replaces the stored one. */
export const PROFILE_MERGED = `contact_name = CASE WHEN excluded.contact_name <> '' THEN excluded.contact_name ELSE contacts.contact_name END,
      email = CASE WHEN excluded.email <> '' THEN excluded.email ELSE contacts.email END,
      phone_number = CASE WHEN excluded.phone_number <> '' THEN excluded.phone_number ELSE contacts.phone_number END`;

/** An upsert changes the stored contact only where a field given differs from it (no row version otherwise). */
export const PROFILE_CHANGED = `(excluded.contact_name <> '' AND excluded.contact_name <> contacts.contact_name)
      OR (excluded.email <> '' AND excluded.email <> contacts.email)
      OR (excluded.phone_number <> '' AND excluded.phone_number <> contacts.phone_number)`;

/**
 * The contact of (account, user) created, or its profile updated only where a given field differs: a token issue
 * for a known user with nothing new writes no row version (the conflicting row is still locked to the commit, so
 * concurrent first contacts wait for each other as before). An unchanged row is read back by the second branch,
 * from the statement's snapshot: a row another unit committed while this one waited for its lock is not in it, and
 * is read by a statement of its own (`known`).
 */
const UPSERT = `WITH up AS (
    INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, phone_number, created_at, search_text)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (account_id, user_id) DO UPDATE SET
      ${PROFILE_MERGED}
    WHERE ${PROFILE_CHANGED}
    RETURNING ${CONTACT}
  )
  SELECT * FROM up
  UNION ALL
  SELECT ${CONTACT} FROM contacts WHERE account_id = $2 AND user_id = $3 AND NOT EXISTS (SELECT 1 FROM up)`;

/** The contact of (account, user), which exists. */
async function known(db: PgDb, accountId: string, userId: string): Promise<Row> {
  const [r] = await db.rows("contact_known", `SELECT ${CONTACT} FROM contacts WHERE account_id = $1 AND user_id = $2`, [
    accountId,
    userId,
  ]);
  if (!r) throw new Error(`contact of ${userId} vanished`);
  return r;
}

/** Contacts; the list reads the aggregates the message writes keep. */
export function pgContacts(db: PgDb): ContactRepository {
  const upsert: ContactRepository["upsert"] = (accountId, userId, profile, now) =>
    db.unit(async () => {
      const contactName = profile?.contactName ?? "";
      const email = profile?.email ?? "";
      const phoneNumber = profile?.phoneNumber ?? "";
      const [upserted] = await db.rows("contact_upsert", UPSERT, [
        newId(),
        accountId,
        userId,
        contactName,
        email,
        phoneNumber,
        now,
        contactSearchText({ userId, contactName, email, phoneNumber }),
      ]);
      const r = upserted ?? (await known(db, accountId, userId));
      // A profile merged with the stored one is folded again here: SQL cannot fold as the domain does.
      const merged = foldedSearchText(r);
      if (merged !== r.search_text)
        await db.count("contact_search_text", "UPDATE contacts SET search_text = $1 WHERE contact_id = $2", [
          merged,
          r.contact_id,
        ]);
      return r.contact_id as string;
    });
  return {
    upsert,
    // With no profile field there is nothing to merge (a stored row is left as it is, though still locked to the
    // commit): the statement's answer is not needed, so it goes with the unit's next statement or its COMMIT.
    ensure: async (accountId, userId, profile, now) => {
      if (profile && (profile.contactName !== "" || profile.email !== "" || profile.phoneNumber !== "")) {
        await upsert(accountId, userId, profile, now);
        return;
      }
      await db.write("contact_upsert", UPSERT, [
        newId(),
        accountId,
        userId,
        "",
        "",
        "",
        now,
        contactSearchText({ userId, contactName: "", email: "", phoneNumber: "" }),
      ]);
    },
    belongsTo: async (accountId, contactId) =>
      (
        await db.rows("contact_owned", "SELECT 1 FROM contacts WHERE contact_id = $1 AND account_id = $2", [
          contactId,
          accountId,
        ])
      ).length > 0,
    // One statement, so the two counters come from one snapshot (see ContactRepository.listVersion).
    listVersion: async (accountId) => {
      const [r] = await db.rows<{ v: string }>(
        "contact_list_version",
        `SELECT coalesce((SELECT last_seq FROM event_counters WHERE account_id = $1), 0) || '.' ||
           coalesce((SELECT version FROM contact_versions WHERE account_id = $1), 0) AS v`,
        [accountId],
      );
      return r!.v;
    },
    list: async (q) => {
      const { name, text, values } = contactListQuery(q);
      const rows = await db.rows(name, text, values);
      const next = rows[q.limit];
      const contacts = rows.slice(0, q.limit).map(
        (r): StoredContact => ({
          contactId: r.contact_id as string,
          userId: r.user_id as string,
          contactName: r.contact_name as string,
          phoneNumber: r.phone_number as string,
          email: r.email as string,
          latestStatus: r.latest_status === "live" || r.latest_status === "closed" ? r.latest_status : null,
          latestActivityAt: num(r.latest_activity_at),
          liveActivityAt: num(r.live_activity_at),
          assignedTo: (r.latest_assigned_to as string | null) ?? "",
          unreadCount: Number(r.unread_count),
          latestMessageAt: Number(r.latest_message_at),
          channels: r.channels === "" ? [] : (r.channels as string).split(","),
          latestConversationId: (r.latest_conversation_id as string | null) ?? "",
        }),
      );
      return { contacts, hasMore: next !== undefined, nextLiveActivityAt: next && num(next.live_activity_at) };
    },
  };
}
