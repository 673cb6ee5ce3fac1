import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ContactFilter } from "../../src/domain/conversation/repository.js";
import { sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { SEARCH_PROBE } from "../../src/storage/sqlite/repos/contacts.js";
import { firstMessage, type StorageFixture, storage } from "./fixture.js";
import { GROWING as GROWING_TABLES, planOf, recordPrepares } from "./plans.js";

// Query plans are deterministic (unlike timings): every statement the repositories prepare is explained here, and
// none may read a whole table that grows with use, nor sort a list the index could have given in order.
const GROWING = [...GROWING_TABLES, "conversation_notes"];

let s: StorageFixture;
let statements: string[];
// The same statements over a database whose planner statistics (ANALYZE) describe the data.
let analyzed: StorageFixture;
let analyzedStatements: string[];

function exercise(f: StorageFixture): string[] {
  const recording = recordPrepares(f.db);
  const repos = sqliteRepositories(f.db);
  const a = f.account();
  // More contacts than the search scan reads, so a rare term reaches the trigram index.
  f.db.transaction(() => {
    for (let i = 0; i < SEARCH_PROBE + 50; i++) firstMessage(repos, a, `u${i}`, 1000 + i);
  })();
  for (const filter of ["all", "unread", "live", "snoozed"] as ContactFilter[]) {
    for (const search of ["", "u1", "u12", "nobody"])
      for (const assignee of [null, "ai_agent"])
        repos.contacts.list({ accountId: a.accountId, search, filter, assignee, limit: 10, offset: 0, liveSince: 0 });
  }
  repos.conversations.messages({ conversationId: "x", createdAt: 0 }, 20, 0);
  repos.conversations.recent({ conversationId: "x", createdAt: 0 }, 20);
  repos.conversations.forUser(a.accountId, a.chatbotId, "u1", 5);
  repos.reports.counts(a.chatbotId, 0, 10_000, 0);
  return recording.stop();
}

beforeAll(() => {
  s = storage();
  statements = exercise(s);
  analyzed = storage();
  analyzedStatements = exercise(analyzed);
  analyzed.db.exec("ANALYZE");
});
afterAll(() => {
  s.close();
  analyzed.close();
});

// With statistics a tiny table (one chatbot, one account) is rightly scanned: only the tables that grow count there.
const plansWithAndWithoutStatistics = (check: (sql: string, plan: string[]) => void) => {
  for (const sql of statements) check(sql, planOf(s.db, sql));
  for (const sql of analyzedStatements)
    if (/\b(contacts|conversations|messages|contact_search)\b/.test(sql)) check(sql, planOf(analyzed.db, sql));
};

describe("query plans", () => {
  it("the repositories prepare their statements (the recording works)", () => {
    expect(statements.some((q) => q.includes("FROM contacts c"))).toBe(true);
    expect(statements.some((q) => q.includes("FROM messages WHERE conversation_id"))).toBe(true);
    expect(statements.some((q) => q.includes("contact_search MATCH"))).toBe(true);
  });

  it("no statement scans a table that grows", () => {
    plansWithAndWithoutStatistics((sql, plan) => {
      for (const step of plan) {
        const scan = /^SCAN (\w+)( |$)/.exec(step);
        // Allowed: a subquery's rows, the report's walk over quarter hours (q, from a constant row), the search
        // index, and "is there any row at all" (LIMIT 1, no condition).
        if (
          scan &&
          !step.includes("VIRTUAL TABLE") &&
          !["w", "q"].includes(scan[1]!) &&
          step !== "SCAN CONSTANT ROW" &&
          !/^SELECT 1 FROM \w+ LIMIT 1$/.test(sql.trim())
        ) {
          // A scan is only allowed over a subquery or over the small signing-key table.
          expect(
            GROWING.includes(scan[1]!) || /FROM (contacts|conversations|messages)\b/.test(sql)
              ? `${step} in ${sql}`
              : "ok",
          ).toBe("ok");
        }
      }
    });
  });

  it("a report reads one chatbot's period as ranges of covering indexes, never a table row nor a sort of them", () => {
    const report = statements.filter((q) => q.includes("chatbot_id = @bot"));
    expect(report).toHaveLength(7);
    const plans = report.map((q) => planOf(s.db, q).join(" | "));
    const range = (index: string) => `USING COVERING INDEX ${index} (chatbot_id=? AND created_at>? AND created_at<?)`;
    for (const p of plans) expect(p).toMatch(/SEARCH (conversations|messages) USING COVERING INDEX/);
    for (const p of plans) expect(p).not.toMatch(/SCAN (conversations|messages)\b/);
    const all = plans.join(" | ");
    expect(all).toContain(range("conversations_report"));
    expect(all).toContain(range("conversations_handed_over"));
    expect(all).toContain(range("conversations_rated"));
    expect(all).toContain(range("messages_report"));
    expect(all).toContain(range("conversations_sla"));
    // Every conversation, and every message, is counted without a sort: only the small partial ones group.
    for (const [i, p] of plans.entries())
      if (/conversations_report|messages_report/.test(p)) expect(p, report[i]).not.toContain("TEMP B-TREE");
  });

  it("lists come from an index in their order: no sort step", () => {
    plansWithAndWithoutStatistics((sql, plan) => {
      const isList = /FROM contacts c|FROM messages WHERE/.test(sql) && !sql.includes("contact_search MATCH");
      if (isList)
        expect(
          plan.filter((p) => p.includes("TEMP B-TREE")),
          sql,
        ).toEqual([]);
    });
  });

  it("each contact list variant reads its own newest-first index, and each page of messages its range", () => {
    // The snooze test (unread, live, snoozed) is a key lookup of the latest conversation (z), left out here and
    // checked below.
    const lookups: string[] = [];
    const plan = (pred: (sql: string) => boolean) =>
      statements.filter(pred).map((q) =>
        planOf(s.db, q)
          .filter((line) => {
            const sub = /CORRELATED|SEARCH z /.test(line);
            if (sub) lookups.push(line);
            return !sub;
          })
          .join(" | "),
      );
    const lists = plan((q) => /FROM contacts c\s+WHERE/.test(q) && q.includes("LIMIT @limit OFFSET @offset"));
    // Four filters, each with and without a view's assignee test (the same index: the view only tests the row).
    expect(lists).toHaveLength(8);
    for (const p of lists)
      expect(p).toMatch(/SEARCH c USING INDEX contacts_\w+ \(account_id=\? AND latest_message_at>\?\)/);
    expect(
      lists.some((p) =>
        /SEARCH c USING INDEX contacts_(recent|recent_search) \(account_id=\? AND latest_message_at>\?\)/.test(p),
      ),
    ).toBe(true);
    expect(lists.some((p) => p.includes("contacts_unread (account_id=? AND latest_message_at>?)"))).toBe(true);
    expect(lists.some((p) => p.includes("contacts_live (account_id=? AND latest_message_at>?)"))).toBe(true);
    // A search window is a range of the newest-first index that carries the search text; its floor is found in
    // that index alone.
    const windows = plan((q) => q.includes("LIMIT @need"));
    expect(windows.length).toBeGreaterThan(0);
    for (const p of windows)
      expect(p).toBe(
        "SEARCH c USING INDEX contacts_recent_search (account_id=? AND latest_message_at>? AND latest_message_at<?)",
      );
    const floors = plan((q) => q.includes("OFFSET @position"));
    expect(floors).toEqual([
      "SEARCH contacts USING COVERING INDEX contacts_recent_search (account_id=? AND latest_message_at>?)",
    ]);
    // The trigram search starts from the index (one account's rowid range) and joins contacts by rowid.
    for (const p of plan((q) => q.includes("contact_search MATCH"))) {
      expect(p).toMatch(/SCAN s VIRTUAL TABLE INDEX/);
      expect(p).toContain("SEARCH c USING INTEGER PRIMARY KEY (rowid=?)");
    }
    // The latest conversation's state is on the contact row: no list variant reads conversations, but for the
    // snooze test, one lookup of the latest conversation by its key.
    for (const p of plan((q) => q.includes("FROM contacts c"))) expect(p).not.toContain("conversations");
    for (const l of lookups.filter((x) => x.startsWith("SEARCH z")))
      expect(l).toMatch(/SEARCH z (EXISTS )?USING INDEX \w+ \(conversation_id=\?\)/);
    for (const p of plan((q) => q.startsWith("SELECT message_id")))
      expect(p).toMatch(
        /SEARCH messages USING INDEX sqlite_autoindex_messages_2 \(conversation_id=\?( AND message_order>\?)?\)/,
      );
  });
});
