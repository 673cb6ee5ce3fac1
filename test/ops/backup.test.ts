import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aiagent } from "../helpers/cli.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { allContents, startWriteLoad } from "./messages.js";

// `aiagent backup` on a live SQLite database while messages are written, `aiagent restore` into a new file, and a
// server started on the restored file answers every message acknowledged before the backup began.
const SECRETS = "backup-test-key-encryption-secret-0123456789";
const work = mkdtempSync(join(tmpdir(), "aiagent-backup-"));
let s: TestServer;
let a: TestAccount;
const started: TestServer[] = [];

beforeAll(async () => {
  // One customer writes the load the backup is taken under: the customer limits are off.
  s = await startServer({ env: { AIAGENT_SECRETS: SECRETS, ...NO_CUSTOMER_LIMITS } });
  a = await s.account();
});
afterAll(async () => {
  for (const t of started) await t.close(true);
  await s?.close(true);
  rmSync(work, { recursive: true, force: true });
});

describe.skipIf(process.env.AIAGENT_TEST_BACKEND === "postgres")("aiagent backup and restore (SQLite)", () => {
  it(
    "a backup taken during writes, restored into a new file, serves every message acknowledged before it",
    async () => {
      const load = await startWriteLoad(s.url, a, "backup-user");
      const { acked, conversationId } = load;

      const file = join(work, "backup.db");
      const before = acked.length;
      const r = await aiagent(["backup", file, "--db", s.dbPath]);
      const after = acked.length;
      await load.stop();
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`written to ${file}`);
      // The server went on acknowledging writes while the backup ran.
      expect(after).toBeGreaterThan(before);

      // Never over the database a running server holds, nor onto an existing file.
      const over = await aiagent(["restore", file, "--db", s.dbPath]);
      expect(over.code).toBe(1);
      expect(over.stderr).toContain("in use by a running server");
      expect((await aiagent(["backup", file, "--db", s.dbPath])).stderr).toContain("already exists");

      const dir = mkdtempSync(join(work, "restored-"));
      const restored = await aiagent(["restore", file, "--db", join(dir, "aiagent.db")]);
      expect(restored.stderr).toBe("");
      expect(restored.code).toBe(0);
      const t = await startServer({ dir, env: { AIAGENT_SECRETS: SECRETS } });
      started.push(t);
      const users = (await allContents(t.url, a, "backup-user", conversationId)).filter((c) => c.startsWith("m-"));
      // Every message acknowledged before the backup began, in order; then a gap-free prefix of the later ones (one
      // commit's state, nothing half-written), none acknowledged after it ended.
      expect(users.slice(0, before)).toEqual(acked.slice(0, before));
      expect(users).toEqual(acked.slice(0, users.length));
      expect(users.length).toBeLessThanOrEqual(after + 1);
    },
    scaled(120_000),
  );

  it(
    "restore refuses a file that is not an aiagent database, and changes nothing",
    async () => {
      const junk = join(work, "junk.db");
      writeFileSync(junk, "not a database at all, just some text that is long enough to look like a file");
      const dir = mkdtempSync(join(work, "junk-"));
      const r = await aiagent(["restore", junk, "--db", join(dir, "aiagent.db")]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/not an aiagent database|cannot open backup/);
      const missing = await aiagent(["restore", join(work, "none.db"), "--db", join(dir, "aiagent.db")]);
      expect(missing.stderr).toContain("does not exist");
      expect((await aiagent(["backup"])).code).toBe(2);
    },
    scaled(90_000),
  );

  it(
    "restore into a folder that does not exist yet makes the folder (issue 47)",
    async () => {
      const file = join(work, "for-new-folder.db");
      expect((await aiagent(["backup", file, "--db", s.dbPath])).code).toBe(0);
      const target = join(work, "new-folder", "deeper", "x.db");
      const r = await aiagent(["restore", file, "--db", target]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(existsSync(target)).toBe(true);
    },
    scaled(90_000),
  );

  it(
    "a read command on a mistyped --db refuses, creating no database and no secret file (issue 47)",
    async () => {
      const typo = join(work, "typo", "aiagent.dbb");
      for (const args of [
        ["account", "list"],
        ["api-key", "list", "--email", a.email],
      ]) {
        const r = await aiagent([...args, "--db", typo]);
        expect(r.code, args.join(" ")).toBe(1);
        expect(r.stderr).toContain(`database ${typo} does not exist`);
      }
      expect(existsSync(typo)).toBe(false);
      expect(existsSync(`${typo}.secret`)).toBe(false);
    },
    scaled(90_000),
  );
});
