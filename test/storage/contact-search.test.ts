import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ContactFilter } from "../../src/domain/conversation/repository.js";
import { contactSearchText, foldForSearch } from "../../src/domain/conversation/search-fold.js";
import { newId } from "../../src/domain/ids.js";
import { SEARCH_PROBE } from "../../src/storage/sqlite/repos/contacts.js";
import { firstMessage, type StorageFixture, storage } from "./fixture.js";

// The contact list picks among plans (a probe of the newest contacts, reading on in a bounded window, the trigram
// index, a full scan of a narrow index for short terms). Whatever it picks, the page must be exactly what the plain
// definition gives: contacts whose stored search text (the folded fields) contains the folded term, newest activity first. Whether the folding itself
// is right is search-folding.test.ts's question, against a reference that shares no code with it.
const FIRST = ["Maria", "John", "Zoë", "Ahmed", "Ingrid", "Grace", "Ösel", "Li", "Noor", "Kenji"];
const LAST = [
  "Garcia",
  "Smith",
  "O'Brien",
  "Kowalski",
  "Müller",
  "100% Cotton_Shop",
  "Nguyen",
  "Hopper",
  "Larsen",
  'Say "Hi"',
];
const DOMAINS = ["example.com", "mail.de", "shop.io"];

let s: StorageFixture;
let a: { accountId: string; chatbotId: string };
let b: { accountId: string; chatbotId: string };
const NOW = 1_763_700_000_000;
const CONTACTS = 1700;

function reference(
  accountId: string,
  search: string,
  filter: ContactFilter,
  limit: number,
  offset: number,
  liveSince: number,
) {
  const where =
    filter === "unread"
      ? " AND unread_count > 0"
      : filter === "live"
        ? " AND live_activity_at IS NOT NULL AND live_activity_at >= @liveSince"
        : "";
  const rows = s.db
    .prepare<Record<string, unknown>, { contact_id: string }>(
      `SELECT contact_id FROM contacts WHERE account_id = @accountId AND latest_message_at IS NOT NULL${where}
       AND (@search = '' OR instr(search_text, @search) > 0)
       ORDER BY latest_message_at DESC, contact_id LIMIT @limit OFFSET @offset`,
    )
    .all({ accountId, search: foldForSearch(search), limit: limit + 1, offset, liveSince });
  return { ids: rows.slice(0, limit).map((r) => r.contact_id), hasMore: rows.length > limit };
}

function list(
  accountId: string,
  search: string,
  filter: ContactFilter,
  limit: number,
  offset: number,
  liveSince: number,
) {
  const r = s.repos.contacts.list({
    accountId,
    search: foldForSearch(search),
    filter,
    assignee: null,
    limit,
    offset,
    liveSince,
  });
  return { ids: r.contacts.map((c) => c.contactId), hasMore: r.hasMore };
}

beforeAll(() => {
  s = storage();
  a = s.account();
  b = s.account();
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  s.db.transaction(() => {
    for (const [acc, n] of [
      [a, CONTACTS],
      [b, 300],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const userId = `cust-${String(i).padStart(4, "0")}`;
        const first = pick(FIRST);
        const last = pick(LAST);
        // A handful of contacts carry a rare word, a few dozen a middle-frequency one.
        const extra = i % 397 === 5 ? " Quixotic" : i % 61 === 3 ? " Zephyr" : "";
        s.repos.contacts.upsert(
          acc.accountId,
          userId,
          {
            contactName: `${first} ${last}${extra}`,
            email: `${first}.${last}${i}@${pick(DOMAINS)}`.toLowerCase().replace(/[^a-z0-9.@]/g, ""),
            phoneNumber: `+1 555 ${String(Math.floor(rnd() * 1e7)).padStart(7, "0")}`,
          },
          NOW,
        );
        const conv = firstMessage(s.repos, acc, userId, NOW - Math.floor(rnd() * 5_000_000));
        if (i % 3 === 0) s.repos.conversations.markRead(conv);
        if (i % 7 === 0) s.repos.conversations.setStatus(conv, "closed", NOW);
        if (i % 5 === 0) s.repos.conversations.assign(conv, `op${i % 3}@shop.example`, "Op");
      }
    }
  })();
});
afterAll(() => s.close());

describe("contact search", () => {
  const liveSince = NOW - 2_500_000;
  const terms = [
    "",
    "a",
    "ma",
    "cust-",
    "cust",
    ".",
    "@",
    "ex",
    "zz",
    "ë",
    "ö",
    "%",
    "_",
    '"',
    "'",
    "o'b",
    "100%",
    "n_s",
    "example",
    "garcia",
    "quixotic",
    "zephyr",
    "zephyr ",
    "cust-00",
    "cust-1234",
    "555 0",
    "mail.de",
    "ös",
    "ÖS",
    "os",
    "müller",
    "MULLER",
    "zoe",
    "nobody-has-this",
  ];
  const filters: ContactFilter[] = ["all", "unread", "live"];
  /** Each filter's page at each (limit, offset) is the plain definition's. */
  const expectDefinitionPages = (
    accountId: string,
    term: string,
    pages: readonly (readonly [number, number])[],
    label = JSON.stringify(term),
  ) => {
    for (const filter of filters)
      for (const [limit, offset] of pages)
        expect(
          list(accountId, term, filter, limit, offset, liveSince),
          `${label} ${filter} ${limit}/${offset}`,
        ).toEqual(reference(accountId, term, filter, limit, offset, liveSince));
  };

  it(`gives the plain definition's page for every term, filter, limit and offset (${CONTACTS} contacts, probe ${SEARCH_PROBE})`, () => {
    for (const term of terms)
      expectDefinitionPages(a.accountId, term, [
        [10, 0],
        [1, 0],
        [100, 0],
        [10, 7],
        [10, SEARCH_PROBE - 5],
        [20, 300],
        [50, CONTACTS - 40],
      ]);
  });

  it("every plan shows each contact's latest conversation's status, assignee and activity", () => {
    const state = s.db.prepare<[string], { status: "live" | "closed"; assigned_to: string; activity: number }>(
      `SELECT v.status, v.assigned_to, coalesce(v.last_message_at, v.created_at) AS activity
       FROM contacts c JOIN conversations v ON v.conversation_id = c.latest_conversation_id WHERE c.contact_id = ?`,
    );
    let seen = 0;
    // The plain list, the bounded scan, the trigram index and the narrow scan of a short term.
    for (const term of ["", "cust-00", "quixotic", "zephyr", "ma"])
      for (const filter of filters) {
        const r = s.repos.contacts.list({
          accountId: a.accountId,
          search: foldForSearch(term),
          filter,
          assignee: null,
          limit: 100,
          offset: 0,
          liveSince,
        });
        for (const c of r.contacts) {
          const v = state.get(c.contactId)!;
          expect([c.latestStatus, c.assignedTo, c.latestActivityAt], `${term} ${filter}`).toEqual([
            v.status,
            v.assigned_to,
            v.activity,
          ]);
          seen++;
        }
      }
    expect(seen).toBeGreaterThan(500);
  });

  it("agrees with the definition for any piece of any stored field", () => {
    const fields = s.db
      .prepare<[string, string], { v: string }>(
        "SELECT contact_name AS v FROM contacts WHERE account_id = ? UNION SELECT email FROM contacts WHERE account_id = ? LIMIT 400",
      )
      .all(a.accountId, a.accountId);
    fc.assert(
      fc.property(
        fc.constantFrom(...fields.map((f) => f.v)),
        fc.nat(),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(...filters),
        (value, start, len, filter) => {
          const from = start % Math.max(1, value.length);
          const term = value.slice(from, from + len);
          expect(list(a.accountId, term, filter, 10, 0, liveSince)).toEqual(
            reference(a.accountId, term, filter, 10, 0, liveSince),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a term common among the newest contacts and rare below them still gives the definition's page", () => {
    // The probe sees one match in five, so reading on looks cheaper than the trigram index; the window below the
    // probe holds none, and the index has to answer after all, with the ten oldest contacts.
    const c = s.account();
    s.db.transaction(() => {
      for (let i = 0; i < 1200; i++) {
        const userId = `older-${i}`;
        const newest = i >= 1200 - SEARCH_PROBE;
        s.repos.contacts.upsert(
          c.accountId,
          userId,
          {
            contactName: (newest && i % 5 === 0) || i < 10 ? "Clustered" : "Plain",
            email: "",
            phoneNumber: "",
          },
          NOW,
        );
        firstMessage(s.repos, c, userId, NOW + i);
      }
    })();
    expectDefinitionPages(c.accountId, "clustered", [
      [100, 0],
      [10, 45],
      [30, 40],
    ]);
    expect(list(c.accountId, "clustered", "all", 100, 0, liveSince).ids).toHaveLength(SEARCH_PROBE / 5 + 10);
  });

  it("bounds remembered from an earlier search give the definition's page after the list has moved", () => {
    // Where a window starts is remembered for a while (FLOOR_REUSE_MS); the clock stands still here, so every search
    // below reuses the bounds found by the first, however many contacts have moved above them since.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const c = s.account();
      const small = s.account();
      const add = (acc: typeof c, from: number, to: number, name: (i: number) => string, at: (i: number) => number) =>
        s.db.transaction(() => {
          for (let i = from; i < to; i++) {
            const userId = `mover-${i}`;
            s.repos.contacts.upsert(acc.accountId, userId, { contactName: name(i), email: "", phoneNumber: "" }, NOW);
            firstMessage(s.repos, acc, userId, at(i));
          }
        })();
      // One contact in twenty matches: the probe sees a dozen, and the page is read on in a window below it.
      const target = () => "Moving Target";
      const still = () => "Standing Still";
      const moving = (i: number) => (i % 20 === 0 ? target() : still());
      add(c, 0, 3000, moving, (i) => NOW + i);
      add(small, 0, 100, moving, (i) => NOW + i);
      const probeFloor = (acc: typeof c) =>
        s.db
          .prepare(
            "SELECT latest_message_at FROM contacts WHERE account_id = ? AND latest_message_at IS NOT NULL ORDER BY latest_message_at DESC, contact_id LIMIT 1 OFFSET ?",
          )
          .pluck()
          .get(acc.accountId, SEARCH_PROBE);
      const check = (acc: typeof c, label: string) =>
        expectDefinitionPages(
          acc.accountId,
          "moving",
          [
            [20, 0],
            [10, 30],
            [100, 0],
          ],
          `${label}:`,
        );
      check(c, "first");
      check(small, "small first");
      const before = probeFloor(c);
      // Newer contacts that do not match push the matches down: the remembered windows now overlap what is newest.
      add(c, 3000, 3300, still, (i) => NOW + 10_000 + i);
      expect(probeFloor(c)).not.toBe(before);
      check(c, "pushed down");
      // Old contacts get new messages and move up.
      s.db.transaction(() => {
        for (let i = 0; i < 3000; i += 120) firstMessage(s.repos, c, `mover-${i}`, NOW + 20_000 + i);
      })();
      check(c, "after moving");
      // Newer contacts that match: the remembered probe bound now holds more than a page of them.
      add(c, 3600, 3700, target, (i) => NOW + 30_000 + i);
      check(c, "after new matches");
      // An account that had fewer contacts than the probe (no bound at all) and then grew.
      add(small, 100, 2500, moving, (i) => NOW + 10_000 + i);
      expect(probeFloor(small)).toBeDefined();
      check(small, "small grown");
    } finally {
      vi.useRealTimers();
    }
  });

  it("never shows another account's contacts", () => {
    for (const term of ["garcia", "quixotic", "cust-0001", "ma"]) {
      const ids = new Set(list(b.accountId, term, "all", 100, 0, liveSince).ids);
      const own = list(a.accountId, term, "all", 100, 0, liveSince).ids;
      expect(own.length, term).toBeGreaterThan(0);
      for (const id of own) expect(ids.has(id)).toBe(false);
      expect(list(b.accountId, term, "all", 100, 0, liveSince)).toEqual(
        reference(b.accountId, term, "all", 100, 0, liveSince),
      );
    }
  });

  it("follows profile changes: the new name is found, the old one no longer", () => {
    const c = s.account();
    s.repos.contacts.upsert(
      c.accountId,
      "renamed",
      { contactName: "Wilhelmina Tarkovsky", email: "", phoneNumber: "" },
      NOW,
    );
    firstMessage(s.repos, c, "renamed", NOW);
    expect(list(c.accountId, "tarkovsky", "all", 10, 0, 0).ids).toHaveLength(1);
    s.repos.contacts.upsert(
      c.accountId,
      "renamed",
      { contactName: "Wilhelmina Strugatsky", email: "", phoneNumber: "" },
      NOW,
    );
    // An empty profile field leaves the stored one as it was (and the search index with it).
    s.repos.contacts.upsert(c.accountId, "renamed", { contactName: "", email: "", phoneNumber: "" }, NOW);
    expect(list(c.accountId, "tarkovsky", "all", 10, 0, 0).ids).toEqual([]);
    expect(list(c.accountId, "strugatsky", "all", 10, 0, 0).ids).toHaveLength(1);
    expect(
      s.db.prepare("SELECT count(*) AS n FROM contact_search WHERE contact_search MATCH '\"wilhelmina\"'").get(),
    ).toEqual({ n: 1 });
  });

  it("a contact written without its account's rowid range is moved into it, and is found", () => {
    const c = s.account();
    s.db
      .prepare(
        "INSERT INTO contacts (contact_id, account_id, user_id, contact_name, created_at, latest_message_at, search_text) VALUES (?, ?, 'plain-insert', 'Plainly Inserted', 1, ?, ?)",
      )
      .run(
        newId(),
        c.accountId,
        NOW,
        contactSearchText({ userId: "plain-insert", contactName: "Plainly Inserted", email: "", phoneNumber: "" }),
      );
    const row = s.db
      .prepare<[string], { rowid: number }>("SELECT rowid FROM contacts WHERE account_id = ?")
      .get(c.accountId)!;
    const accountRowid = s.db
      .prepare<[string], { rowid: number }>("SELECT rowid FROM accounts WHERE account_id = ?")
      .get(c.accountId)!.rowid;
    expect(Math.floor(row.rowid / 2 ** 32)).toBe(accountRowid);
    expect(list(c.accountId, "inserted", "all", 10, 0, 0).ids).toHaveLength(1);
  });
});
