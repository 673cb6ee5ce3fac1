import { chmodSync, closeSync, existsSync, mkdtempSync, openSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backupSqlite, restoreSqlite } from "../../src/storage/sqlite/backup.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { issueTokens } from "../helpers/flows.js";
import { startServer } from "../helpers/server.js";

// Issue 47: the database, its -wal and -shm, and every backup hold every account's data: readable and writable by
// their owner only (0600), whatever the umask lets SQLite create (0644 by default).
const work = mkdtempSync(join(tmpdir(), "aiagent-modes-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const mode = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.env.AIAGENT_TEST_BACKEND === "postgres")("file modes (SQLite)", () => {
  it("a new database, its WAL and SHM, a backup and a restored database are 0600", async () => {
    const dir = join(work, "served");
    const s = await startServer({ dir });
    try {
      const a = await s.account();
      await issueTokens(s.url, a, "mode-user");
      for (const f of [s.dbPath, `${s.dbPath}-wal`, `${s.dbPath}-shm`]) {
        expect(existsSync(f), f).toBe(true);
        expect(mode(f).toString(8), f).toBe("600");
      }
      expect(mode(dir) & 0o077, "the folder the server made").toBe(0);
      const backup = join(work, "backup.db");
      await backupSqlite(s.dbPath, backup);
      expect(mode(backup).toString(8)).toBe("600");
      const restored = join(work, "restored.db");
      await restoreSqlite(backup, restored);
      expect(mode(restored).toString(8)).toBe("600");
    } finally {
      await s.close(true);
    }
  });

  it("a database an older version left 0644 is narrowed to 0600 when opened", () => {
    const path = join(work, "old.db");
    closeSync(openSync(path, "w", 0o644));
    chmodSync(path, 0o644);
    openDatabase(path).close();
    expect(mode(path).toString(8)).toBe("600");
  });
});
