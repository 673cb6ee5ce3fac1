import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestServer } from "../helpers/server.js";
import { suiteCanRun, which } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { allContents, startWriteLoad } from "./messages.js";

// The PostgreSQL recipe of docs/operations.md, run as written: pg_dump of a live database while messages are
// written, pg_restore into a new database, a server on it answering every message acknowledged before the dump.
const run = promisify(execFile);
const SECRETS = "pg-backup-test-key-encryption-secret-0123456789";
const skip = await postgresSkipReason();
if (skip) console.warn(`SKIPPED ${import.meta.filename}: ${skip}`);
const clientTools = suiteCanRun(import.meta.filename, ["postgresql-client"]);

const majorOf = (version: string) => Number(/(\d+)/.exec(version)?.[1] ?? 0);

/** Why this pg_dump cannot dump the tests' server (it must be of the same or a later major version), if it cannot. */
async function versionMismatch(url: string): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const server = (await c.query<{ v: string }>("SHOW server_version")).rows[0]!.v;
  await c.end();
  const client = (await run(which("pg_dump")!, ["--version"])).stdout;
  return majorOf(client.replace(/^\D+/, "")) < majorOf(server)
    ? `pg_dump (${client.trim()}) is older than the server (${server}); install the matching postgresql-client`
    : undefined;
}

const work = mkdtempSync(join(tmpdir(), "aiagent-pgdump-"));
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const f of cleanup.reverse()) await f().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
});

describe.runIf(!skip && clientTools)("PostgreSQL backup recipe: pg_dump and pg_restore", () => {
  it(
    "a dump taken during writes, restored into a new database, serves every message acknowledged before it",
    async () => {
      const source: TestDatabase = await createTestDatabase();
      cleanup.push(() => source.drop());
      const mismatch = await versionMismatch(source.url);
      if (mismatch) {
        console.warn(`SKIPPED ${import.meta.filename}: ${mismatch}`);
        return;
      }
      // One customer writes the load the dump is taken under.
      const env = { AIAGENT_DATABASE_URL: source.url, AIAGENT_SECRETS: SECRETS, ...NO_CUSTOMER_LIMITS };
      const s: TestServer = await startServer({ env });
      cleanup.push(() => s.close(true));
      const a = await s.account();
      const load = await startWriteLoad(s.url, a, "dump-user");
      const { acked, conversationId } = load;

      const dump = join(work, "aiagent.dump");
      const before = acked.length;
      // The recipe: one consistent snapshot of the live database, in pg_restore's custom format.
      await run(which("pg_dump")!, ["--format=custom", "--no-owner", `--file=${dump}`, source.url], {
        timeout: scaled(60_000),
      });
      await load.stop();

      const target = await createTestDatabase({ empty: true });
      cleanup.push(() => target.drop());
      await run(which("pg_restore")!, ["--no-owner", "--exit-on-error", `--dbname=${target.url}`, dump], {
        timeout: scaled(60_000),
      });
      const t = await startServer({ env: { AIAGENT_DATABASE_URL: target.url, AIAGENT_SECRETS: SECRETS } });
      cleanup.push(() => t.close());
      const users = (await allContents(t.url, a, "dump-user", conversationId)).filter((c) => c.startsWith("m-"));
      expect(users.slice(0, before)).toEqual(acked.slice(0, before));
      expect(users).toEqual(acked.slice(0, users.length));
    },
    scaled(120_000),
  );
});
