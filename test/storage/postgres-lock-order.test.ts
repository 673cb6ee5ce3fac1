import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { account, message } from "./contract/fixtures.js";

// Every write that touches a conversation and its contact locks the conversation's row first. A write taking them
// in the other order deadlocks with a concurrent message: PostgreSQL then aborts one side, which is retried or
// answered 503 — correct, but a second of waiting (deadlock_timeout) and a failed attempt for nothing.

const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL lock order skipped: ${skip}`);

describe.skipIf(skip !== undefined)("PostgreSQL lock order", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** Deadlocks PostgreSQL detected in the test database (counted by the backends, reported when they end). */
  async function deadlocks(): Promise<number> {
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const r = await c.query<{ deadlocks: string }>(
        "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()",
      );
      return Number(r.rows[0]!.deadlocks);
    } finally {
      await c.end();
    }
  }

  it("markRead waits behind a writer holding the conversation, then the contact, without a deadlock", async () => {
    const store: PgStore = await openPgStore(database.url);
    const before = await deadlocks();
    const a = await account(store);
    const conversationId = newId();
    await message(store, a, conversationId, { userId: "u1", at: 1, start: true });
    await message(store, a, conversationId, { userId: "u1", at: 2 });
    const { contact_id: contactId } = (
      await store.pool.query<{ contact_id: string }>(
        "SELECT contact_id FROM conversations WHERE conversation_id = $1",
        [conversationId],
      )
    ).rows[0]!;

    // A writer in the order a message takes them: the conversation first…
    const writer = new pg.Client({ connectionString: database.url });
    await writer.connect();
    await writer.query("BEGIN");
    await writer.query("UPDATE conversations SET message_count = message_count WHERE conversation_id = $1", [
      conversationId,
    ]);
    // …while markRead starts and waits for a lock…
    const read = store.conversations.markRead(conversationId).then(
      () => "read",
      (e: unknown) => e,
    );
    await waitForLockWait(store);
    // …then the contact: had markRead locked the contact first, this waits on it and one of the two is aborted.
    await writer.query("UPDATE contacts SET unread_count = unread_count WHERE contact_id = $1", [contactId]);
    await writer.query("COMMIT");
    await writer.end();

    expect(await read).toBe("read");
    const after = await store.pool.query<{ unread: number; contact_unread: number }>(
      `SELECT v.unread_count AS unread, c.unread_count AS contact_unread
       FROM conversations v JOIN contacts c ON c.contact_id = v.contact_id WHERE v.conversation_id = $1`,
      [conversationId],
    );
    expect(after.rows[0]).toEqual({ unread: 0, contact_unread: 0 });
    // The pool's backends report their counters when they end.
    await store.close();
    expect((await deadlocks()) - before).toBe(0);
  });
});

/** Until one of the store's connections waits for a row lock (at most 5 s). */
async function waitForLockWait(store: PgStore): Promise<void> {
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    const r = await store.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (Number(r.rows[0]!.n) > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("markRead never waited for a lock");
}
