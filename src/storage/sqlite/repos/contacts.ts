import type { ContactFilter, ContactQuery, ContactRepository, ContactView } from "../../../domain/conversation/repository.js";
import { newId } from "../../../domain/ids.js";
import type { Db } from "../database.js";

interface ListRow {
  contact_id: string;
  user_id: string;
  contact_name: string;
  phone_number: string;
  email: string;
  unread_count: number;
  latest_message_at: number;
  channels: string;
  status: string | null;
  assigned_to: string | null;
  conv_activity: number | null;
}

const FILTER_SQL: Record<ContactFilter, string> = {
  all: "",
  unread: " AND c.unread_count > 0",
  live: " AND c.live_activity_at IS NOT NULL AND c.live_activity_at >= @liveSince",
};
// instr() is a literal substring test, so % and _ in a search term are ordinary characters.
const SEARCH_SQL =
  " AND (instr(lower(c.contact_name), @search) > 0 OR instr(lower(c.email), @search) > 0 OR instr(lower(c.phone_number), @search) > 0 OR instr(lower(c.user_id), @search) > 0)";

/** Contacts in SQLite; the list reads the aggregates the message writes keep. */
export function sqliteContacts(db: Db): ContactRepository {
  const upsert = db.prepare<unknown[], { contact_id: string }>(`
    INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, phone_number, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (account_id, user_id) DO UPDATE SET
      contact_name = CASE WHEN excluded.contact_name <> '' THEN excluded.contact_name ELSE contact_name END,
      email = CASE WHEN excluded.email <> '' THEN excluded.email ELSE email END,
      phone_number = CASE WHEN excluded.phone_number <> '' THEN excluded.phone_number ELSE phone_number END
    RETURNING contact_id`);
  const lists = new Map<string, ReturnType<typeof db.prepare<Record<string, unknown>, ListRow>>>();
  const listStatement = (filter: ContactFilter, search: boolean) => {
    const key = `${filter}:${search}`;
    let st = lists.get(key);
    if (!st) {
      st = db.prepare<Record<string, unknown>, ListRow>(`
        SELECT c.contact_id, c.user_id, c.contact_name, c.phone_number, c.email, c.unread_count, c.latest_message_at, c.channels,
               v.status, v.assigned_to, coalesce(v.last_message_at, v.created_at) AS conv_activity
        FROM contacts c LEFT JOIN conversations v ON v.conversation_id = c.latest_conversation_id
        WHERE c.account_id = @accountId AND c.latest_message_at IS NOT NULL${FILTER_SQL[filter]}${search ? SEARCH_SQL : ""}
        ORDER BY c.latest_message_at DESC, c.contact_id
        LIMIT @limit OFFSET @offset`);
      lists.set(key, st);
    }
    return st;
  };

  return {
    upsert: (accountId, userId, profile, now) =>
      upsert.get(newId(), accountId, userId, profile?.contactName ?? "", profile?.email ?? "", profile?.phoneNumber ?? "", now)!.contact_id,
    list: (q: ContactQuery) => {
      const params: Record<string, unknown> = { accountId: q.accountId, limit: q.limit + 1, offset: q.offset };
      if (q.filter === "live") params.liveSince = q.liveSince;
      if (q.search !== "") params.search = q.search;
      const rows = listStatement(q.filter, q.search !== "").all(params);
      const hasMore = rows.length > q.limit;
      const contacts = rows.slice(0, q.limit).map(
        (r): ContactView => ({
          contactId: r.contact_id,
          userId: r.user_id,
          contactName: r.contact_name,
          phoneNumber: r.phone_number,
          email: r.email,
          conversationStatus: r.status === "live" && (r.conv_activity ?? 0) >= q.liveSince ? "live" : "closed",
          assignedTo: r.assigned_to ?? "",
          unreadCount: r.unread_count,
          latestMessageAt: r.latest_message_at,
          channels: r.channels === "" ? [] : r.channels.split(","),
        }),
      );
      return { contacts, hasMore };
    },
  };
}
