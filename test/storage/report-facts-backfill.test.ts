import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ReportCounts } from "../../src/domain/report/report.js";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { postgresMigratedFrom, sqliteBefore } from "../helpers/schema-before.js";

// Conversations written before the report's facts were kept on the rows (SQLite migration 24, PostgreSQL 18) get
// them from their stored messages and ratings at start: the report counts them as it counts new ones.

const dir = mkdtempSync(join(tmpdir(), "aiagent-report-facts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SETUP = [
  "INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)",
  "INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ('bot', 'acc', 'b', 1)",
  "INSERT INTO contacts (contact_id, account_id, user_id, created_at) VALUES ('c1', 'acc', 'u1', 1)",
];
// v1: handed over (the operator's first message written after a later one), closed, rated; v2: the customer only,
// its last_message_at behind its last message (two sends committed out of order): the backfill takes the latest.
const CONVERSATIONS = [
  "('v1', 'acc', 'bot', 'c1', 'web', 'closed', 'ann@shop.example', 1000, 906000)",
  "('v2', 'acc', 'bot', 'c1', 'web', 'live', 'ai_agent', 2000, 2500)",
];
const MESSAGES = [
  "('m1', 'v1', 1, 'user', 'hi', 1000)",
  "('m2', 'v1', 2, 'assistant', 'hello', 1001)",
  "('m3', 'v1', 3, 'operator', 'a person', 906000)",
  "('m4', 'v1', 4, 'operator', 'earlier', 905000)",
  "('m5', 'v2', 1, 'user', 'hi', 2000)",
  "('m6', 'v2', 2, 'user', 'later', 3000)",
  "('m7', 'v2', 3, 'user', 'earlier', 2500)",
];
const INSERTS = [
  ...SETUP,
  `INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at, last_message_at) VALUES ${CONVERSATIONS.join(", ")}`,
  `INSERT INTO messages (message_id, conversation_id, message_order, role, content, created_at) VALUES ${MESSAGES.join(", ")}`,
  "INSERT INTO conversation_ratings (conversation_id, account_id, score, comment, rated_at) VALUES ('v1', 'acc', 5, '', 907000)",
];

const FACTS =
  "SELECT conversation_id, first_customer_at, first_operator_at, rating_score, last_message_at FROM conversations ORDER BY 1";
const WANT_FACTS = [
  {
    conversation_id: "v1",
    first_customer_at: 1000,
    first_operator_at: 905000,
    rating_score: 5,
    last_message_at: 906000,
  },
  {
    conversation_id: "v2",
    first_customer_at: 2000,
    first_operator_at: null,
    rating_score: null,
    last_message_at: 3000,
  },
];
const WANT_COUNTS: ReportCounts = {
  starts: [
    { quarter: 0, conversations: 2, handedOver: 0 },
    { quarter: 0, conversations: 0, handedOver: 1 },
  ],
  ratings: [{ score: 5, count: 1 }],
  firstResponses: [{ seconds: 904, count: 1 }],
  timesToClose: [{ seconds: 905, count: 1 }],
  messageQuarters: [
    { quarter: 0, messages: 5 },
    { quarter: 1, messages: 2 },
  ],
  sla: { hits: 0, breaches: 0 },
};
const sorted = (c: ReportCounts): ReportCounts => ({
  ...c,
  starts: [...c.starts].sort((a, b) => a.handedOver - b.handedOver),
  messageQuarters: [...c.messageQuarters].sort((a, b) => a.quarter - b.quarter),
});
// PostgreSQL's bigint comes back as a string.
const numbers = (rows: Record<string, unknown>[]) =>
  rows.map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k, typeof v === "string" && /_at$|_score$/.test(k) ? Number(v) : v]),
    ),
  );

it("SQLite: conversations and messages written before migration 24 are counted after it", async () => {
  const path = join(dir, "old.db");
  const old = sqliteBefore(path, 24);
  for (const sql of INSERTS) old.exec(sql);
  old.close();
  const db = openDatabase(path, { synchronous: "OFF" });
  try {
    expect(db.prepare(FACTS).all()).toEqual(WANT_FACTS);
    expect(db.prepare("SELECT DISTINCT chatbot_id, conversation_created_at FROM messages ORDER BY 2").all()).toEqual([
      { chatbot_id: "bot", conversation_created_at: 1000 },
      { chatbot_id: "bot", conversation_created_at: 2000 },
    ]);
    expect(sorted(await sqliteRepositories(db).reports.counts("bot", 0, 900_000, 0))).toEqual(WANT_COUNTS);
  } finally {
    db.close();
  }
});

const skip = await postgresSkipReason();
describe.skipIf(skip !== undefined)("PostgreSQL", () => {
  it("conversations and messages written before migration 18 are counted after it", async () => {
    await postgresMigratedFrom(
      18,
      async (client) => {
        for (const sql of INSERTS) await client.query(sql);
      },
      async (store) => {
        expect(numbers((await store.pool.query(FACTS)).rows)).toEqual(WANT_FACTS);
        const m = await store.pool.query(
          "SELECT DISTINCT chatbot_id, conversation_created_at FROM messages ORDER BY 2",
        );
        expect(numbers(m.rows)).toEqual([
          { chatbot_id: "bot", conversation_created_at: 1000 },
          { chatbot_id: "bot", conversation_created_at: 2000 },
        ]);
        expect(sorted(await store.reports.counts("bot", 0, 900_000, 0))).toEqual(WANT_COUNTS);
      },
    );
  });
});
