import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ContactQuery, ContactRepository, StoredContact } from "../../src/domain/conversation/repository.js";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { postgresMigratedFrom, sqliteBefore } from "../helpers/schema-before.js";

// Contacts written before the latest conversation's status, assignee and activity were copied onto them (SQLite
// migration 12, PostgreSQL migration 6) get the copies at start: the list shows what the join used to give.

const dir = mkdtempSync(join(tmpdir(), "aiagent-contact-latest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Contact = [contactId: string, userId: string, latestMessageAt: number | null, latestConversationId: string | null];
type Conversation = [
  conversationId: string,
  contactId: string,
  status: string,
  assignedTo: string,
  createdAt: number,
  lastMessageAt: number | null,
];

const CONTACTS: Contact[] = [
  // The latest conversation is the newer one; the older one is closed and held by someone else.
  ["c1", "u1", 40, "v1b"],
  // The latest is the one written to last, not the one started last.
  ["c2", "u2", 90, "v2a"],
  // No message time on the conversation: its activity is its creation.
  ["c3", "u3", 80, "v3"],
  // No conversation at all: not listed, and nothing to copy.
  ["c4", "u4", null, null],
];
const CONVERSATIONS: Conversation[] = [
  ["v1a", "c1", "closed", "ann@shop.example", 10, 20],
  ["v1b", "c1", "live", "ai_agent", 30, 40],
  ["v2a", "c2", "live", "bob@shop.example", 50, 90],
  ["v2b", "c2", "closed", "ai_agent", 60, 70],
  ["v3", "c3", "closed", "ann@shop.example", 80, null],
];
for (let i = 0; i < 40; i++) {
  CONTACTS.push([`x${i}`, `other-${i}`, 100 + i, `w${i}`]);
  CONVERSATIONS.push([
    `w${i}`,
    `x${i}`,
    i % 3 ? "live" : "closed",
    i % 4 ? "ai_agent" : `op${i}@shop.example`,
    i,
    100 + i,
  ]);
}

// What the list read through its join with the latest conversation, before the migration.
const JOINED = `SELECT c.contact_id, v.status, v.assigned_to, coalesce(v.last_message_at, v.created_at) AS activity
  FROM contacts c LEFT JOIN conversations v ON v.conversation_id = c.latest_conversation_id
  WHERE c.account_id = 'acc' AND c.latest_message_at IS NOT NULL ORDER BY c.latest_message_at DESC, c.contact_id`;
type Joined = { contact_id: string; status: string; assigned_to: string; activity: number | string };
const asListed = (rows: Joined[]) => rows.map((r) => [r.contact_id, r.status, r.assigned_to, Number(r.activity)]);
const listed = (contacts: StoredContact[]) =>
  contacts.map((c) => [c.contactId, c.latestStatus, c.assignedTo, c.latestActivityAt]);
type Page = Awaited<ReturnType<ContactRepository["list"]>>;
// Either back end's repository: SQLite's answers synchronously.
const listAll = async (contacts: { list(q: ContactQuery): Page | Promise<Page> }) =>
  contacts.list({ accountId: "acc", search: "", filter: "all", assignee: null, limit: 100, offset: 0, liveSince: 0 });

/** The list after the migration is what the join gave before it, and the join gave the latest conversations' state. */
function expectListedAsJoined(after: StoredContact[], before: unknown[]) {
  expect(listed(after)).toEqual(before);
  expect(before.slice(-3)).toEqual([
    ["c2", "live", "bob@shop.example", 90],
    ["c3", "closed", "ann@shop.example", 80],
    ["c1", "live", "ai_agent", 40],
  ]);
}

it("SQLite: contacts written before migration 12 list their latest conversation's state after it", async () => {
  const path = join(dir, "old.db");
  const old = sqliteBefore(path, 12);
  old.prepare("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)").run();
  old.prepare("INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ('bot', 'acc', 'b', 1)").run();
  const contact = old.prepare(
    "INSERT INTO contacts (contact_id, account_id, user_id, created_at, latest_message_at, latest_conversation_id) VALUES (?, 'acc', ?, 1, ?, ?)",
  );
  for (const c of CONTACTS) contact.run(...c);
  const conversation = old.prepare(
    "INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at, last_message_at) VALUES (?, 'acc', 'bot', ?, 'web', ?, ?, ?, ?)",
  );
  for (const v of CONVERSATIONS) conversation.run(...v);
  const before = asListed(old.prepare<[], Joined>(JOINED).all());
  old.close();

  const db = openDatabase(path, { synchronous: "OFF" });
  try {
    const after = await listAll(sqliteRepositories(db).contacts);
    expectListedAsJoined(after.contacts, before);
    expect(
      db
        .prepare("SELECT latest_status, latest_assigned_to, latest_activity_at FROM contacts WHERE contact_id = 'c4'")
        .get(),
    ).toEqual({ latest_status: null, latest_assigned_to: null, latest_activity_at: null });
  } finally {
    db.close();
  }
});

const skip = await postgresSkipReason();
describe.skipIf(skip !== undefined)("PostgreSQL", () => {
  it("contacts written before migration 6 list their latest conversation's state after it", async () => {
    let before: unknown[] = [];
    await postgresMigratedFrom(
      6,
      async (client) => {
        await client.query("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)");
        await client.query(
          "INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ('bot', 'acc', 'b', 1)",
        );
        for (const c of CONTACTS)
          await client.query(
            "INSERT INTO contacts (contact_id, account_id, user_id, created_at, latest_message_at, latest_conversation_id) VALUES ($1, 'acc', $2, 1, $3, $4)",
            c,
          );
        for (const v of CONVERSATIONS)
          await client.query(
            "INSERT INTO conversations (conversation_id, account_id, chatbot_id, contact_id, channel, status, assigned_to, created_at, last_message_at) VALUES ($1, 'acc', 'bot', $2, 'web', $3, $4, $5, $6)",
            v,
          );
        before = asListed((await client.query<Joined>(JOINED)).rows);
      },
      async (store) => {
        const after = await listAll(store.contacts);
        expectListedAsJoined(after.contacts, before);
        expect(
          (
            await store.pool.query(
              "SELECT latest_status, latest_assigned_to, latest_activity_at FROM contacts WHERE contact_id = 'c4'",
            )
          ).rows,
        ).toEqual([{ latest_status: null, latest_assigned_to: null, latest_activity_at: null }]);
      },
    );
  });
});
