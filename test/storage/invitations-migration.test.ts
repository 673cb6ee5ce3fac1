import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { InvitationRecord } from "../../src/domain/account/repository.js";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { postgresMigratedFrom, sqliteBefore } from "../helpers/schema-before.js";

// Members invited before invitations had their own table (SQLite migration 17, PostgreSQL migration 11) are pending
// invitations after it, under the same id and code, so a link already passed on still works; joined members stay.

const dir = mkdtempSync(join(tmpdir(), "aiagent-invitations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MEMBERS = `INSERT INTO members (member_id, account_id, email, role, password_hash, invitation_hash,
    invitation_expires_at, created_at, joined_at) VALUES
  ('m-pending', 'acc', 'Pending@Shop.example', 'admin', NULL, 'code-hash', 5000, 10, NULL),
  ('m-joined', 'acc', 'joined@shop.example', 'operator', 'scrypt$x', NULL, NULL, 11, 12)`;
const PENDING: InvitationRecord = {
  invitationId: "m-pending",
  accountId: "acc",
  email: "Pending@Shop.example",
  role: "admin",
  codeHash: "code-hash",
  expiresAt: 5000,
  createdAt: 10,
};

it("SQLite: a member invited before migration 17 is a pending invitation after it", () => {
  const path = join(dir, "old.db");
  const old = sqliteBefore(path, 17);
  old.prepare("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)").run();
  old.exec(MEMBERS);
  old.close();

  const db = openDatabase(path, { synchronous: "OFF" });
  try {
    const repos = sqliteRepositories(db);
    expect(repos.invitations.byCode("code-hash")).toEqual(PENDING);
    expect(repos.members.byEmail("pending@shop.example")).toBeUndefined();
    expect(repos.members.listForAccount("acc").map((m) => m.memberId)).toEqual(["m-joined"]);
  } finally {
    db.close();
  }
});

const skip = await postgresSkipReason();
describe.skipIf(skip !== undefined)("PostgreSQL", () => {
  it("a member invited before migration 11 is a pending invitation after it", async () => {
    await postgresMigratedFrom(
      11,
      async (client) => {
        await client.query("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)");
        await client.query(MEMBERS);
      },
      async (store) => {
        expect(await store.invitations.byCode("code-hash")).toEqual(PENDING);
        expect(await store.members.byEmail("pending@shop.example")).toBeUndefined();
        expect((await store.members.listForAccount("acc")).map((m) => m.memberId)).toEqual(["m-joined"]);
      },
    );
  });
});
