import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openPgStore } from "../../src/storage/postgres/index.js";
import { pgMigrations } from "../../src/storage/postgres/migrations.js";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { migrations } from "../../src/storage/sqlite/migrations.js";
import { createTestDatabase, postgresSkipReason } from "../helpers/postgres.js";

// Refresh tokens issued before sessions existed (SQLite migration 10, PostgreSQL migration 4) become sessions: each
// gets an id of its own, its issue counts as its last use, and the registry lists them.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const dir = mkdtempSync(join(tmpdir(), "aiagent-sessions-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ROWS = [
  ["h1", "u1", 10, null],
  ["h2", "u1", 20, 25],
  ["h3", "u2", 30, null],
] as const;

it("SQLite: refresh tokens written before migration 10 are sessions after it", () => {
  const path = join(dir, "old.db");
  const old = new Database(path);
  for (const m of migrations.filter((m) => m.version < 10)) {
    old.exec(m.sql);
    m.after?.(old as never);
    old.pragma(`user_version = ${m.version}`);
  }
  old.prepare("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)").run();
  old
    .prepare(
      `INSERT INTO chatbots (chatbot_id, account_id, name, allowed_origins, knowledge, active, created_at)
       VALUES ('bot', 'acc', 'b', '[]', '[]', 1, 1)`,
    )
    .run();
  const add = old.prepare(
    "INSERT INTO refresh_tokens (token_hash, account_id, chatbot_id, user_id, created_at, expires_at, revoked_at) VALUES (?, 'acc', 'bot', ?, ?, 1000, ?)",
  );
  for (const r of ROWS) add.run(...r);
  old.close();

  const db = openDatabase(path, { synchronous: "OFF" });
  try {
    const repos = sqliteRepositories(db);
    const listed = repos.refreshTokens.list({ accountId: "acc" }, 10, 0);
    expect(listed.map((r) => [r.tokenHash, r.lastUsedAt, r.revokedAt])).toEqual([
      ["h3", 30, null],
      ["h2", 20, 25],
      ["h1", 10, null],
    ]);
    for (const r of listed) expect(r.sessionId).toMatch(UUID);
    expect(new Set(listed.map((r) => r.sessionId)).size).toBe(3);
    expect(repos.refreshTokens.bySession(listed[0]!.sessionId)?.tokenHash).toBe("h3");
    // A revoked session's access tokens stop at its revocation.
    expect(repos.refreshTokens.notBefore("bot", "u1", listed[1]!.sessionId)).toBe(25);
  } finally {
    db.close();
  }
});

const skip = await postgresSkipReason();
describe.skipIf(skip !== undefined)("PostgreSQL", () => {
  it("refresh tokens written before migration 4 are sessions after it", async () => {
    const database = await createTestDatabase();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(
        "CREATE TABLE aiagent_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      for (const m of pgMigrations.filter((m) => m.version < 4)) {
        await client.query(m.sql);
        await client.query("INSERT INTO aiagent_schema (version) VALUES ($1)", [m.version]);
      }
      await client.query("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)");
      await client.query(
        "INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ('bot', 'acc', 'b', 1)",
      );
      for (const r of ROWS)
        await client.query(
          "INSERT INTO refresh_tokens (token_hash, account_id, chatbot_id, user_id, created_at, expires_at, revoked_at) VALUES ($1, 'acc', 'bot', $2, $3, 1000, $4)",
          [...r],
        );
    } finally {
      await client.end();
    }
    const store = await openPgStore(database.url, { poolSize: 2 });
    try {
      const listed = await store.refreshTokens.list({ accountId: "acc" }, 10, 0);
      expect(listed.map((r) => [r.tokenHash, r.lastUsedAt, r.revokedAt])).toEqual([
        ["h3", 30, null],
        ["h2", 20, 25],
        ["h1", 10, null],
      ]);
      for (const r of listed) expect(r.sessionId).toMatch(UUID);
      expect(new Set(listed.map((r) => r.sessionId)).size).toBe(3);
      expect(await store.refreshTokens.notBefore("bot", "u1", listed[1]!.sessionId)).toBe(25);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
