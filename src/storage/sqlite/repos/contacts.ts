import type {
  ContactFilter,
  ContactProfile,
  ContactQuery,
  ContactRepository,
  StoredContact,
} from "../../../domain/conversation/repository.js";
import { contactSearchText } from "../../../domain/conversation/search-fold.js";
import { newId } from "../../../domain/ids.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";
import { ACCOUNT_RANGE, nextContactRowid } from "./contact-rowid.js";

interface ListRow {
  contact_id: string;
  user_id: string;
  contact_name: string;
  phone_number: string;
  email: string;
  unread_count: number;
  latest_message_at: number;
  channels: string;
  latest_status: string | null;
  latest_assigned_to: string | null;
  latest_activity_at: number | null;
  latest_conversation_id: string | null;
}

type Statement = ReturnType<Db["prepare"]>;

/** Rows of the newest-first index a search reads before it turns to the trigram index. */
export const SEARCH_SCAN_BUDGET = 1000;
/** The trigram index answers terms of this many characters or more. */
export const TRIGRAM_MIN = 3;
// Relative costs, measured: one row of the narrow newest-first index read and tested, one trigram candidate
// fetched, tested and sorted.
const SCAN_ROW_COST = 1;
const CANDIDATE_COST = 4;

// `live` reads closed once idle: live_activity_at <= latest_message_at always, so the newest-first scan can
// stop at liveSince instead of walking every contact that ever had a live conversation.
const FILTER_SQL: Record<ContactFilter, string> = {
  all: "",
  unread: " AND c.unread_count > 0",
  live: " AND c.live_activity_at IS NOT NULL AND c.live_activity_at >= @liveSince AND c.latest_message_at >= @liveSince",
};
// The latest conversation's status, assignee and activity are copies on the contact row (migration 12), kept by
// every conversation write: a listed row costs no lookup of its conversation.
const COLUMNS = `c.contact_id, c.user_id, c.contact_name, c.phone_number, c.email, c.unread_count, c.latest_message_at, c.channels, c.latest_conversation_id,
  c.latest_status, c.latest_assigned_to, c.latest_activity_at`;
const ORDER = "ORDER BY c.latest_message_at DESC, c.contact_id";
// The stored search text (migration 6): the four searchable fields folded by the domain and joined by a separator
// a term cannot contain, so one instr() tests all four; the contacts_recent_search index carries it, so a scan reads
// it from the index. instr() is a literal substring test: % and _ are ordinary.
const MATCHES = "instr(c.search_text, @search) > 0";

/**
 * The statements of each way to read the list. Without a search: the newest-first partial index of the filter.
 * With a search: the newest-first index that carries the search text, read for at most SEARCH_SCAN_BUDGET rows
 * (a common term fills its page there); then, for 3+ characters, the trigram index limited to the account's rowid
 * range (a rare term has few candidates); a 1–2 character term keeps reading the narrow index until its page is full.
 */
function listStatements(db: Db) {
  const cache = new Map<string, Statement>();
  const get = (key: string, sql: () => string) => {
    let st = cache.get(key);
    if (!st) cache.set(key, (st = db.prepare(sql())));
    return st;
  };
  return {
    plain: (f: ContactFilter) =>
      get(
        `plain:${f}`,
        () => `SELECT ${COLUMNS} FROM contacts c
        WHERE c.account_id = @accountId AND c.latest_message_at IS NOT NULL${FILTER_SQL[f]} ${ORDER} LIMIT @limit OFFSET @offset`,
      ),
    // The subquery reads index entries only (at most @budget of them; -1: all); the outer query joins the table
    // for the rows that match, in the subquery's order.
    budgeted: (f: ContactFilter) =>
      get(
        `budgeted:${f}`,
        () => `SELECT ${COLUMNS} FROM (
          SELECT rowid AS rid, latest_message_at AS lm, contact_id AS cid, instr(search_text, @search) AS hit FROM contacts INDEXED BY contacts_recent_search
          WHERE account_id = @accountId AND latest_message_at IS NOT NULL${f === "live" ? " AND latest_message_at >= @liveSince" : ""}
          ORDER BY latest_message_at DESC, contact_id LIMIT @budget) AS w
        CROSS JOIN contacts c ON c.rowid = w.rid
        WHERE w.hit > 0${FILTER_SQL[f]}
        ORDER BY w.lm DESC, w.cid LIMIT @need`,
      ),
    beyondBudget: get(
      "beyond",
      () =>
        "SELECT 1 FROM contacts INDEXED BY contacts_recent_search WHERE account_id = @accountId AND latest_message_at IS NOT NULL ORDER BY latest_message_at DESC, contact_id LIMIT 1 OFFSET @budget",
    ),
    // The candidates are sorted on what the contact row alone gives; the page's rows are read again by rowid.
    trigram: (f: ContactFilter) =>
      get(
        `trigram:${f}`,
        () => `SELECT ${COLUMNS} FROM (
          SELECT c.rowid AS rid, c.latest_message_at AS lm, c.contact_id AS cid FROM contact_search s CROSS JOIN contacts c ON c.rowid = s.rowid
          WHERE contact_search MATCH @match AND s.rowid BETWEEN @lo AND @hi
            AND c.account_id = @accountId AND c.latest_message_at IS NOT NULL${FILTER_SQL[f]} AND ${MATCHES} ${ORDER} LIMIT @limit OFFSET @offset) AS w
        CROSS JOIN contacts c ON c.rowid = w.rid
        ORDER BY w.lm DESC, w.cid`,
      ),
  };
}

/** Contacts in SQLite; the list reads the aggregates the message writes keep. */
export function sqliteContacts(db: Db): Sync<ContactRepository> {
  const upsert = db.prepare<
    [Record<string, unknown>],
    {
      contact_id: string;
      user_id: string;
      contact_name: string;
      email: string;
      phone_number: string;
      search_text: string;
    }
  >(`
    INSERT INTO contacts (rowid, contact_id, account_id, user_id, contact_name, email, phone_number, created_at, search_text)
    VALUES (${nextContactRowid("@accountId")}, @contactId, @accountId, @userId, @contactName, @email, @phoneNumber, @now, @searchText)
    ON CONFLICT (account_id, user_id) DO UPDATE SET
      contact_name = CASE WHEN excluded.contact_name <> '' THEN excluded.contact_name ELSE contact_name END,
      email = CASE WHEN excluded.email <> '' THEN excluded.email ELSE email END,
      phone_number = CASE WHEN excluded.phone_number <> '' THEN excluded.phone_number ELSE phone_number END
    RETURNING contact_id, user_id, contact_name, email, phone_number, search_text`);
  // A profile merged with the stored one (an empty field keeps the old value) is folded again here: SQL cannot.
  const setSearchText = db.prepare<[string, string]>("UPDATE contacts SET search_text = ? WHERE contact_id = ?");
  const upsertContact = db.transaction(
    (accountId: string, userId: string, profile: ContactProfile | undefined, now: number): string => {
      const contactName = profile?.contactName ?? "";
      const email = profile?.email ?? "";
      const phoneNumber = profile?.phoneNumber ?? "";
      const searchText = contactSearchText({ userId, contactName, email, phoneNumber });
      const r = upsert.get({
        accountId,
        contactId: newId(),
        userId,
        contactName,
        email,
        phoneNumber,
        now,
        searchText,
      })!;
      const merged = contactSearchText({
        userId: r.user_id,
        contactName: r.contact_name,
        email: r.email,
        phoneNumber: r.phone_number,
      });
      if (merged !== r.search_text) setSearchText.run(merged, r.contact_id);
      return r.contact_id;
    },
  );
  const accountRowid = db.prepare<[string], { rowid: number }>("SELECT rowid FROM accounts WHERE account_id = ?");
  // The highest contact rowid of an account: how many contacts it has had (rowids count up from its range start).
  const lastRowid = db
    .prepare<[number, number], number>(
      "SELECT rowid FROM contacts WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT 1",
    )
    .pluck();
  const owned = db
    .prepare<[string, string], number>("SELECT 1 FROM contacts WHERE contact_id = ? AND account_id = ?")
    .pluck();
  const ranges = new Map<string, number>();
  const st = listStatements(db);

  const rangeOf = (accountId: string): number | undefined => {
    let lo = ranges.get(accountId);
    if (lo === undefined) {
      const r = accountRowid.get(accountId);
      if (!r) return undefined;
      lo = r.rowid * ACCOUNT_RANGE;
      if (ranges.size > 10_000) ranges.clear();
      ranges.set(accountId, lo);
    }
    return lo;
  };

  const search = (q: ContactQuery, params: Record<string, unknown>): ListRow[] => {
    // The trigram tokenizer counts code points, not UTF-16 units.
    if ([...q.search].length >= TRIGRAM_MIN) {
      const need = q.offset + q.limit + 1;
      const first = st.budgeted(q.filter).all({ ...params, budget: SEARCH_SCAN_BUDGET, need }) as ListRow[];
      if (
        first.length === need ||
        st.beyondBudget.get({ accountId: q.accountId, budget: SEARCH_SCAN_BUDGET }) === undefined
      ) {
        return first.slice(q.offset);
      }
      const lo = rangeOf(q.accountId);
      if (lo === undefined) return [];
      // Fewer matches than the page needs among the newest contacts. With the match rate seen so far, estimate
      // what reading on would cost against what the trigram index's candidates (every match) would, and take the
      // cheaper; reading on is capped at twice the estimate, after which the index answers anyway.
      const hits = first.length;
      if (hits > 0) {
        const contacts = (lastRowid.get(lo, lo + ACCOUNT_RANGE - 1) ?? lo) - lo;
        const rowsToRead = Math.ceil((need * SEARCH_SCAN_BUDGET) / hits);
        const candidates = (hits / SEARCH_SCAN_BUDGET) * contacts;
        if (rowsToRead * SCAN_ROW_COST < candidates * CANDIDATE_COST) {
          const more = st
            .budgeted(q.filter)
            .all({ ...params, budget: Math.min(2 * rowsToRead, contacts), need }) as ListRow[];
          if (more.length === need || 2 * rowsToRead >= contacts) return more.slice(q.offset);
        }
      }
      // A quoted FTS5 string: the trigrams of the term, in order.
      const match = `"${q.search.replace(/"/g, '""')}"`;
      return st.trigram(q.filter).all({ ...params, match, lo, hi: lo + ACCOUNT_RANGE - 1 }) as ListRow[];
    }
    // 1–2 characters: no index can answer; the narrow index is read newest first until the page is full.
    return (st.budgeted(q.filter).all({ ...params, budget: -1, need: q.offset + q.limit + 1 }) as ListRow[]).slice(
      q.offset,
    );
  };

  return {
    upsert: (accountId, userId, profile, now) => upsertContact(accountId, userId, profile, now),
    belongsTo: (accountId, contactId) => owned.get(contactId, accountId) !== undefined,
    list: (q: ContactQuery) => {
      const params: Record<string, unknown> = { accountId: q.accountId, limit: q.limit + 1, offset: q.offset };
      if (q.filter === "live") params.liveSince = q.liveSince;
      let rows: ListRow[];
      if (q.search === "") rows = st.plain(q.filter).all(params) as ListRow[];
      else rows = search(q, { ...params, search: q.search });
      const hasMore = rows.length > q.limit;
      const contacts = rows.slice(0, q.limit).map(
        (r): StoredContact => ({
          contactId: r.contact_id,
          userId: r.user_id,
          contactName: r.contact_name,
          phoneNumber: r.phone_number,
          email: r.email,
          latestStatus: r.latest_status === "live" || r.latest_status === "closed" ? r.latest_status : null,
          latestActivityAt: r.latest_activity_at,
          assignedTo: r.latest_assigned_to ?? "",
          unreadCount: r.unread_count,
          latestMessageAt: r.latest_message_at,
          channels: r.channels === "" ? [] : r.channels.split(","),
          latestConversationId: r.latest_conversation_id ?? "",
        }),
      );
      return { contacts, hasMore };
    },
  };
}
