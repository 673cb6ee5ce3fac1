import { spawn } from "node:child_process";
import type Database from "better-sqlite3";
import { afterEach, expect } from "vitest";
import { NO_CUSTOMER_LIMITS, startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { type ChildServer, expectNoSecrets, ROOT } from "./support.js";

/**
 * The durability files' shared fixture (the file is split only so that its parts run in parallel): the secrets
 * that no log may show, and the servers and child processes each test starts, stopped after it.
 */
export function durabilityFixture() {
  const secrets = new Set<string>();
  const servers: TestServer[] = [];
  const children: ChildServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      expectNoSecrets(s.logs, secrets);
      await s.close(true);
    }
    for (const c of children.splice(0)) {
      c.proc.kill("SIGKILL");
      await c.exited;
    }
  });

  async function server(env: Record<string, string> = {}, dir?: string): Promise<TestServer> {
    // Its customers write loads (filling a disk, a SIGTERM's traffic): the customer limits are off.
    const s = await startServer({ env: { ...NO_CUSTOMER_LIMITS, ...env }, ...(dir ? { dir } : {}) });
    servers.push(s);
    return s;
  }

  async function account(s: TestServer): Promise<TestAccount> {
    const a = await s.account();
    secrets.add(a.apiKey).add(a.password);
    return a;
  }
  return { secrets, servers, children, server, account };
}

/** A second process that takes SQLite's write lock on the file and keeps it until told to let go. */
export async function holdExclusiveLock(dbPath: string): Promise<{ release(): Promise<void> }> {
  const script = `
    const db = new (require("better-sqlite3"))(process.argv[1]);
    db.exec("BEGIN EXCLUSIVE");
    process.stdout.write("locked\\n");
    process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.stdout.write("released\\n"); process.exit(0); });
  `;
  const proc = spawn(process.execPath, ["-e", script, dbPath], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = (async function* () {
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += String(chunk);
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        yield buf.slice(0, i);
        buf = buf.slice(i + 1);
      }
    }
  })();
  expect((await lines.next()).value).toBe("locked");
  return {
    async release() {
      proc.stdin.write("go\n");
      expect((await lines.next()).value).toBe("released");
    },
  };
}

/** message_order is 1..n in every conversation and each conversation's count agrees with its rows. */
export function expectConsistent(db: Database.Database) {
  const bad = db
    .prepare(
      `SELECT c.conversation_id FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.conversation_id
       GROUP BY c.conversation_id HAVING count(m.message_id) <> c.message_count OR coalesce(max(m.message_order), 0) <> count(m.message_id) OR coalesce(min(m.message_order), 1) <> 1`,
    )
    .all();
  expect(bad).toEqual([]);
  expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
}
