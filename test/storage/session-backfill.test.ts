import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { postgresMigratedFrom, sqliteBefore } from "../helpers/schema-before.js";

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

/** The three tokens of ROWS, newest first, each a session with an id of its own; its issue is its last use. */
function expectThreeSessions(
  listed: { tokenHash: string; lastUsedAt: number; revokedAt: number | null; sessionId: string }[],
) {
  expect(listed.map((r) => [r.tokenHash, r.lastUsedAt, r.revokedAt])).toEqual([
    ["h3", 30, null],
    ["h2", 20, 25],
    ["h1", 10, null],
  ]);
  for (const r of listed) expect(r.sessionId).toMatch(UUID);
  expect(new Set(listed.map((r) => r.sessionId)).size).toBe(3);
}

it("SQLite: refresh tokens written before migration 10 are sessions after it", () => {
  const path = join(dir, "old.db");
  const old = sqliteBefore(path, 10);
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
    expectThreeSessions(listed);
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
    await postgresMigratedFrom(
      4,
      async (client) => {
        await client.query("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)");
        await client.query(
          "INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ('bot', 'acc', 'b', 1)",
        );
        for (const r of ROWS)
          await client.query(
            "INSERT INTO refresh_tokens (token_hash, account_id, chatbot_id, user_id, created_at, expires_at, revoked_at) VALUES ($1, 'acc', 'bot', $2, $3, 1000, $4)",
            [...r],
          );
      },
      async (store) => {
        const listed = await store.refreshTokens.list({ accountId: "acc" }, 10, 0);
        expectThreeSessions(listed);
        expect(await store.refreshTokens.notBefore("bot", "u1", listed[1]!.sessionId)).toBe(25);
      },
    );
  });
});
