import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { account, message } from "./contract/fixtures.js";

// Messages carry no foreign key to their conversation on PostgreSQL (migration 39): the append inserts a message
// only from the conversation row its own UPDATE returned, and a conversation is deleted only after its row is
// locked FOR UPDATE (privacy.ts). These cases hold that reason to account: an append that races the deletion of its
// conversation waits for the lock and then writes nothing, and a deletion after an append takes its message along.

const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL messages' key skipped: ${skip}`);

describe.skipIf(skip !== undefined)("PostgreSQL messages without a key to their conversation", () => {
  let database: TestDatabase;
  let store: PgStore;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    store = await openPgStore(database.url, { poolSize: 4 });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await database?.drop();
  });

  const messagesOf = async (id: string) =>
    Number(
      (await client.query<{ n: string }>("SELECT count(*) AS n FROM messages WHERE conversation_id = $1", [id]))
        .rows[0]!.n,
    );

  /** Deletes the conversation as an erasure does: its row locked first, then its messages, then the row. */
  const deleting = async (id: string, whileLocked: () => Promise<void>) => {
    await client.query("BEGIN");
    await client.query("SELECT conversation_id FROM conversations WHERE conversation_id = $1 FOR UPDATE", [id]);
    await whileLocked();
    await client.query("DELETE FROM messages WHERE conversation_id = $1", [id]);
    await client.query("DELETE FROM conversations WHERE conversation_id = $1", [id]);
    await client.query("COMMIT");
  };

  it("an append that waits on its conversation's deletion fails and leaves no message", async () => {
    const a = await account(store);
    const id = newId();
    await message(store, a, id, { at: 1, start: true });
    let append: Promise<unknown> | undefined;
    await deleting(id, async () => {
      append = message(store, a, id, { at: 2 });
      append.catch(() => undefined);
      // The append is under way once a session of the store waits for the row's lock.
      for (;;) {
        const { rows } = await client.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
        );
        if (rows.length > 0) break;
        await new Promise((r) => setImmediate(r));
      }
    });
    await expect(append).rejects.toThrow(/vanished/);
    expect(await messagesOf(id)).toBe(0);
    expect((await client.query("SELECT 1 FROM conversations WHERE conversation_id = $1", [id])).rowCount).toBe(0);
  });

  it("a deletion after appends takes every message along; an append afterwards writes nothing", async () => {
    const a = await account(store);
    const id = newId();
    await message(store, a, id, { at: 1, start: true });
    await Promise.all([2, 3, 4].map((at) => message(store, a, id, { at })));
    expect(await messagesOf(id)).toBe(4);
    await deleting(id, async () => undefined);
    expect(await messagesOf(id)).toBe(0);
    await expect(message(store, a, id, { at: 5 })).rejects.toThrow(/vanished/);
    expect(await messagesOf(id)).toBe(0);
  });
});
