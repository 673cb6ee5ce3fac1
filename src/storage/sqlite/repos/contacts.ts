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
import { ShortMemo } from "./short-memo.js";
import { fileState, UnchangedMemo } from "./unchanged-memo.js";

/** A listed contact as a raw row, in COLUMNS' order (an array: better-sqlite3 builds no object per row). */
type ListRow = [
  contactId: string,
  userId: string,
  contactName: string,
  phoneNumber: string,
  email: string,
  unreadCount: number,
  latestMessageAt: number,
  channels: string,
  latestConversationId: string | null,
  latestStatus: string | null,
  latestAssignedTo: string | null,
  latestActivityAt: number | null,
  liveActivityAt: number | null,
];

type Statement = ReturnType<Db["prepare"]>;

/** Rows of the newest-first index a search reads before it estimates how common its term is. */
export const SEARCH_PROBE = 250;
/** The trigram index answers terms of this many characters or more. */
export const TRIGRAM_MIN = 3;
// Relative costs, measured on the 100k dataset: one row of the newest-first index read and tested (about 0.2 µs),
// one trigram candidate fetched, tested and sorted (about 0.75 µs).
const SCAN_ROW_COST = 1;
const CANDIDATE_COST = 4;
/** How long a window's bound found by skipping index entries is used again (see floorAt in sqliteContacts). */
export const FLOOR_REUSE_MS = 1000;
/** No upper bound on latest_message_at (the newest contacts). */
const NO_CEILING = Number.MAX_SAFE_INTEGER;

// `live` reads closed once idle: live_activity_at <= latest_message_at always, so the newest-first scan can
// stop at liveSince instead of walking every contact that ever had a live conversation.
const FILTER_SQL: Record<ContactFilter, string> = {
  all: "",
  unread: " AND c.unread_count > 0",
  live: " AND c.live_activity_at IS NOT NULL AND c.live_activity_at >= @liveSince AND c.latest_message_at >= @liveSince",
  snoozed: "",
};
// A snoozed latest conversation left the open views (unread, live) until it wakes; snoozed lists only those. A lookup
// of the latest conversation by its key.
const ASLEEP =
  "EXISTS (SELECT 1 FROM conversations z WHERE z.conversation_id = c.latest_conversation_id AND z.snoozed_until IS NOT NULL)";
const SNOOZE_SQL: Record<ContactFilter, string> = {
  all: "",
  unread: ` AND NOT ${ASLEEP}`,
  live: ` AND NOT ${ASLEEP}`,
  snoozed: ` AND ${ASLEEP}`,
};
const LABEL_SQL =
  " AND EXISTS (SELECT 1 FROM conversation_labels l WHERE l.conversation_id = c.latest_conversation_id AND l.label_id = @labelId)";
// A view (mine, unassigned) tests the latest conversation's assignee, copied on the contact row, in any case.
const ASSIGNEE_SQL = " AND lower(c.latest_assigned_to) = @assignee";
// An operator's teams do not see some chatbots: a contact whose latest conversation is of one is left out.
const HIDDEN_SQL = ` AND NOT EXISTS (SELECT 1 FROM conversations v WHERE v.conversation_id = c.latest_conversation_id
  AND v.chatbot_id IN (SELECT value FROM json_each(@hidden)))`;
/**
 * Which statement of a kind: the filter, whether a view names an assignee, whether some chatbots are hidden, whether
 * a label is asked for.
 */
interface Shape {
  f: ContactFilter;
  a: boolean;
  h: boolean;
  l: boolean;
}
const where = ({ f, a, h, l }: Shape) =>
  FILTER_SQL[f] + SNOOZE_SQL[f] + (a ? ASSIGNEE_SQL : "") + (h ? HIDDEN_SQL : "") + (l ? LABEL_SQL : "");
const shapeKey = ({ f, a, h, l }: Shape) => `${f}:${a}:${h}:${l}`;
// The latest conversation's status, assignee and activity are copies on the contact row (migration 12), kept by
// every conversation write: a listed row costs no lookup of its conversation.
const COLUMNS = `c.contact_id, c.user_id, c.contact_name, c.phone_number, c.email, c.unread_count, c.latest_message_at, c.channels, c.latest_conversation_id,
  c.latest_status, c.latest_assigned_to, c.latest_activity_at, c.live_activity_at`;
const ORDER = "ORDER BY c.latest_message_at DESC, c.contact_id";
// The stored search text (migration 6): the four searchable fields folded by the domain and joined by a separator
// a term cannot contain, so one instr() tests all four; the contacts_recent_search index carries it, so a scan reads
// it from the index. instr() is a literal substring test: % and _ are ordinary.
const MATCHES = "instr(c.search_text, @search) > 0";

/**
 * The statements of each way to read the list. Without a search: the newest-first partial index of the filter.
 * With a search: windows of the newest-first index that carries the search text (the newest SEARCH_PROBE rows
 * first: a common term fills its page there), or, for 3+ characters, the trigram index limited to the account's
 * rowid range (a rare term has few candidates); a 1–2 character term reads the narrow index until its page is full.
 */
function listStatements(db: Db) {
  const cache = new Map<string, Statement>();
  const get = (key: string, sql: () => string, raw = false) => {
    let st = cache.get(key);
    if (!st) cache.set(key, (st = db.prepare(sql()).raw(raw)));
    return st;
  };
  // Rows as arrays: building a page's rows as objects was a quarter of the list statement's time.
  const rows = (key: string, sql: () => string) => get(key, sql, true);
  return {
    plain: (x: Shape) =>
      rows(
        `plain:${shapeKey(x)}`,
        () => `SELECT ${COLUMNS} FROM contacts c
        WHERE c.account_id = @accountId AND c.latest_message_at IS NOT NULL${where(x)} ${ORDER} LIMIT @limit OFFSET @offset`,
      ),
    // A window of the newest-first index, [floor, ceil) of latest_message_at, read in order and tested as it
    // goes (the table row is read only for a match); it stops at @need matches.
    window: (x: Shape) =>
      rows(
        `window:${shapeKey(x)}`,
        () => `SELECT ${COLUMNS} FROM contacts c INDEXED BY contacts_recent_search
          WHERE c.account_id = @accountId AND c.latest_message_at IS NOT NULL
            AND c.latest_message_at >= @floor AND c.latest_message_at < @ceil AND ${MATCHES}${where(x)}
          ${ORDER} LIMIT @need`,
      ),
    // The latest_message_at of the listed contact at a position: skipping index entries costs a fifth of reading them.
    floorAt: get(
      "floor",
      () =>
        "SELECT latest_message_at FROM contacts INDEXED BY contacts_recent_search WHERE account_id = @accountId AND latest_message_at IS NOT NULL ORDER BY latest_message_at DESC, contact_id LIMIT 1 OFFSET @position",
    ),
    // The candidates are sorted on what the contact row alone gives; the page's rows are read again by rowid.
    trigram: (x: Shape) =>
      rows(
        `trigram:${shapeKey(x)}`,
        () => `SELECT ${COLUMNS} FROM (
          SELECT c.rowid AS rid, c.latest_message_at AS lm, c.contact_id AS cid FROM contact_search s CROSS JOIN contacts c ON c.rowid = s.rowid
          WHERE contact_search MATCH @match AND s.rowid BETWEEN @lo AND @hi
            AND c.account_id = @accountId AND c.latest_message_at IS NOT NULL${where(x)} AND ${MATCHES} ${ORDER} LIMIT @limit OFFSET @offset) AS w
        CROSS JOIN contacts c ON c.rowid = w.rid
        ORDER BY w.lm DESC, w.cid`,
      ),
  };
}

const shapeOf = (q: ContactQuery): Shape => ({
  f: q.filter,
  a: q.assignee !== null,
  h: q.hiddenChatbots !== undefined && q.hiddenChatbots.length > 0,
  l: Boolean(q.labelId),
});

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
  // The stored profile, raw: [contact_id, contact_name, email, phone_number].
  const stored = db
    .prepare<[string, string], [string, string, string, string]>(
      "SELECT contact_id, contact_name, email, phone_number FROM contacts WHERE account_id = ? AND user_id = ?",
    )
    .raw();
  const writeContact = db.transaction(
    (accountId: string, userId: string, contactName: string, email: string, phoneNumber: string, now: number) => {
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
  const upsertContact = (accountId: string, userId: string, profile: ContactProfile | undefined, now: number) => {
    const contactName = profile?.contactName ?? "";
    const email = profile?.email ?? "";
    const phoneNumber = profile?.phoneNumber ?? "";
    // A known contact whose profile this changes in nothing (every field empty or as stored) is not written: the
    // upsert would rewrite its row as it is (a page in the log of each token issue) and look up its next rowid. The
    // read needs no transaction of its own (nothing runs between it and the write, which the upsert makes safe
    // anyway), so a token issue for a known contact runs one statement here, not three (a savepoint and its release).
    const known = stored.get(accountId, userId);
    if (
      known &&
      (contactName === "" || contactName === known[1]) &&
      (email === "" || email === known[2]) &&
      (phoneNumber === "" || phoneNumber === known[3])
    )
      return known[0];
    return writeContact(accountId, userId, contactName, email, phoneNumber, now);
  };
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
  // One statement, so the two counters come from one snapshot (see ContactRepository.listVersion).
  const listVersion = db
    .prepare<[{ accountId: string }], string>(
      `SELECT coalesce((SELECT last_seq FROM event_counters WHERE account_id = @accountId), 0) || '.' ||
        coalesce((SELECT version FROM contact_versions WHERE account_id = @accountId), 0)`,
    )
    .pluck();
  // Read by every list page (is the remembered page still the list?): kept while the file is unchanged, at the cost
  // of the file state the call's ID token already read in the same task.
  const versions = new UnchangedMemo<string>(fileState(db));
  const ranges = new Map<string, number>();
  const floors = new ShortMemo<number | undefined>(FLOOR_REUSE_MS);
  const st = listStatements(db);

  // A window's bound only decides how much is read, never what is answered: each window is read whole between its
  // bounds, the next starts where the previous ended, and a window with no floor reads to the oldest contact. So a
  // bound found by skipping entries (14% of a middle-frequency search's CPU) is used again for a second, however
  // the list has moved since; a stale bound costs a wider or narrower window, not a different page.
  const floorAt = (accountId: string, position: number): number | undefined =>
    floors.get(
      `${position}:${accountId}`,
      () => (st.floorAt.get({ accountId, position }) as { latest_message_at: number } | undefined)?.latest_message_at,
    );

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
    const need = q.offset + q.limit + 1;
    const read = (floor: number, ceil: number, limit: number) =>
      st.window(shapeOf(q)).all({ ...params, floor, ceil, need: limit }) as ListRow[];
    // 1–2 characters: no index can answer; the narrow index is read newest first until the page is full.
    // The trigram tokenizer counts code points, not UTF-16 units.
    if ([...q.search].length < TRIGRAM_MIN) return read(-1, NO_CEILING, need).slice(q.offset);
    // A window that reaches the oldest listed contact (no floor), or below the live filter's start, was complete.
    const complete = (floor: number | undefined) =>
      floor === undefined || (q.filter === "live" && floor <= q.liveSince);
    const probeFloor = floorAt(q.accountId, SEARCH_PROBE);
    const first = read(probeFloor ?? -1, NO_CEILING, need);
    if (first.length === need || complete(probeFloor)) return first.slice(q.offset);
    const lo = rangeOf(q.accountId);
    if (lo === undefined) return [];
    // Fewer matches than the page needs among the newest contacts. With the match rate seen so far, estimate
    // what reading on would cost against what the trigram index's candidates (every match) would, and take the
    // cheaper; reading on stops at twice the estimate (a window bounded by the contact at that position, found by
    // skipping index entries), after which the index answers anyway.
    const hits = first.length;
    if (hits > 0) {
      const contacts = (lastRowid.get(lo, lo + ACCOUNT_RANGE - 1) ?? lo) - lo;
      const rowsToRead = Math.ceil((need * SEARCH_PROBE) / hits);
      const candidates = (hits / SEARCH_PROBE) * contacts;
      if (rowsToRead * SCAN_ROW_COST < candidates * CANDIDATE_COST) {
        const floor = floorAt(q.accountId, 2 * rowsToRead);
        // The first window held every contact at or above probeFloor, so this one starts below it.
        const more = read(floor ?? -1, probeFloor!, need - hits);
        if (hits + more.length === need || complete(floor)) return first.concat(more).slice(q.offset);
      }
    }
    // A quoted FTS5 string: the trigrams of the term, in order.
    const match = `"${q.search.replace(/"/g, '""')}"`;
    return st.trigram(shapeOf(q)).all({ ...params, match, lo, hi: lo + ACCOUNT_RANGE - 1 }) as ListRow[];
  };

  return {
    upsert: (accountId, userId, profile, now) => upsertContact(accountId, userId, profile, now),
    ensure: (accountId, userId, profile, now) => {
      upsertContact(accountId, userId, profile, now);
    },
    belongsTo: (accountId, contactId) => owned.get(contactId, accountId) !== undefined,
    listVersion: (accountId) => versions.get(accountId, () => listVersion.get({ accountId })!),
    list: (q: ContactQuery) => {
      const params: Record<string, unknown> = { accountId: q.accountId, limit: q.limit + 1, offset: q.offset };
      if (q.filter === "live") params.liveSince = q.liveSince;
      if (q.assignee !== null) params.assignee = q.assignee;
      if (q.hiddenChatbots?.length) params.hidden = JSON.stringify(q.hiddenChatbots);
      if (q.labelId) params.labelId = q.labelId;
      let rows: ListRow[];
      if (q.search === "") rows = st.plain(shapeOf(q)).all(params) as ListRow[];
      else rows = search(q, { ...params, search: q.search });
      const next = rows[q.limit];
      const contacts = rows.slice(0, q.limit).map(
        (r): StoredContact => ({
          contactId: r[0],
          userId: r[1],
          contactName: r[2],
          phoneNumber: r[3],
          email: r[4],
          unreadCount: r[5],
          latestMessageAt: r[6],
          channels: r[7] === "" ? [] : r[7].split(","),
          latestConversationId: r[8] ?? "",
          latestStatus: r[9] === "live" || r[9] === "closed" ? r[9] : null,
          assignedTo: r[10] ?? "",
          latestActivityAt: r[11],
          liveActivityAt: r[12],
        }),
      );
      return { contacts, hasMore: next !== undefined, nextLiveActivityAt: next?.[12] };
    },
  };
}
