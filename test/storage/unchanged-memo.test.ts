import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTask } from "node:timers/promises";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/ids.js";
import { openSqliteStore, type SqliteStore } from "../../src/storage/sqlite/index.js";
import { account, apiKeyRecord } from "./contract/fixtures.js";

// On SQLite the reads every call with an ID token makes (its account, its keys and its revocations) are kept while
// the file is unchanged. A revocation must still stop the very next call, whoever wrote it: this process, another
// process on the same file (the CLI), and never a row a rolled-back unit of work wrote. The list version is kept the
// same way; the frame token's check is read each time (keeping it measured no gain), and held to the same here.
// Another connection's commit is seen from the next task of the event loop: a call arrives in a task of its own
// (a socket read), so the one after a commit is always in a later task than the commit.
let dir: string;
let store: SqliteStore;
let other: Database.Database | undefined;
afterEach(async () => {
  other?.close();
  other = undefined;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = () => {
  dir = mkdtempSync(join(tmpdir(), "aiagent-memo-"));
  store = openSqliteStore(join(dir, "t.db"), { synchronous: "OFF" });
  return store;
};

describe("reads kept while the SQLite file is unchanged", () => {
  it("see a write by another connection at the next read", async () => {
    const s = open();
    const a = await account(s);
    const key = apiKeyRecord(a.accountId);
    await s.apiKeys.insert(key);
    const lineage = [`person:${a.accountId}:x@y.example`];
    // Read twice: the second is the kept answer.
    for (let i = 0; i < 2; i++) {
      expect((await s.accounts.byId(a.accountId))?.active).toBe(true);
      expect(await s.refreshTokens.lineageNotBefore(lineage)).toBeUndefined();
      expect((await s.apiKeys.listForAccount(a.accountId))[0]?.revokedAt).toBeNull();
      expect((await s.refreshTokens.frameAccess(a.chatbotId, "u1", "s1")).notBefore).toBeUndefined();
    }
    const version = await s.contacts.listVersion(a.accountId);

    // Another process on the same file (as `aiagent` commands are); each write, then the next call in a later task.
    other = new Database(join(dir, "t.db"));
    other.prepare("UPDATE accounts SET active = 0 WHERE account_id = ?").run(a.accountId);
    await nextTask();
    expect((await s.accounts.byId(a.accountId))?.active).toBe(false);
    other
      .prepare("INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES ('', ?, 500)")
      .run(lineage[0]);
    await nextTask();
    expect(await s.refreshTokens.lineageNotBefore(lineage)).toBe(500);
    other.prepare("UPDATE api_keys SET revoked_at = 600 WHERE api_key_id = ?").run(key.apiKeyId);
    await nextTask();
    expect((await s.apiKeys.listForAccount(a.accountId))[0]?.revokedAt).toBe(600);
    other
      .prepare("INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES (?, 'u1', 700)")
      .run(a.chatbotId);
    await nextTask();
    expect((await s.refreshTokens.frameAccess(a.chatbotId, "u1", "s1")).notBefore).toBe(700);
    expect(await s.contacts.listVersion(a.accountId)).toBe(version);
    other.prepare("INSERT INTO contact_versions (account_id, version) VALUES (?, 41)").run(a.accountId);
    await nextTask();
    expect(await s.contacts.listVersion(a.accountId)).not.toBe(version);
  });

  it("keep each frame token's answer apart, whatever blanks its user id holds", async () => {
    const s = open();
    const a = await account(s);
    await s.transaction(async (tx) => {
      await tx.refreshTokens.revoke({ accountId: a.accountId, chatbotId: a.chatbotId, userId: "a" }, 700);
    });
    // ("a b", session "c") and ("a", session "b c"): the same words in the same order.
    expect((await s.refreshTokens.frameAccess(a.chatbotId, "a b", "c")).notBefore).toBeUndefined();
    expect((await s.refreshTokens.frameAccess(a.chatbotId, "a", "b c")).notBefore).toBe(700);
  });

  it("see this process's own write at once, even within one run of synchronous code", async () => {
    const s = open();
    await account(s);
    const lineage = [`session:${newId()}`];
    // Not awaited one by one: the three calls run back to back, where the file's state is read once for all.
    const [before, , after] = await Promise.all([
      s.refreshTokens.lineageNotBefore(lineage),
      s.refreshTokens.revokeLineage(lineage, 300),
      s.refreshTokens.lineageNotBefore(lineage),
    ]);
    expect(before).toBeUndefined();
    expect(after).toBe(300);
  });

  it("see this process's own write at the next read, and never keep what a rolled-back unit wrote", async () => {
    const s = open();
    const a = await account(s);
    const lineage = [`session:${newId()}`];
    expect(await s.refreshTokens.lineageNotBefore(lineage)).toBeUndefined();
    await s.refreshTokens.revokeLineage(lineage, 100);
    expect(await s.refreshTokens.lineageNotBefore(lineage)).toBe(100);

    const later = [`session:${newId()}`];
    expect(await s.refreshTokens.lineageNotBefore(later)).toBeUndefined();
    await expect(
      s.transaction(async (tx) => {
        await tx.refreshTokens.revokeLineage(later, 200);
        // Read inside the unit: it sees its own write, which must not outlive the rollback.
        expect(await tx.refreshTokens.lineageNotBefore(later)).toBe(200);
        throw new Error("undo");
      }),
    ).rejects.toThrow("undo");
    expect(await s.refreshTokens.lineageNotBefore(later)).toBeUndefined();
    expect((await s.accounts.byId(a.accountId))?.active).toBe(true);
  });
});
