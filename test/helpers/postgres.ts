import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { firstAnswering, LOCAL_ADMIN_URLS } from "../../src/storage/postgres/probe.js";
import { embeddedPostgresUnavailable } from "./embedded-postgres.js";
import { atExit } from "./leftovers.js";

/**
 * Where the tests' PostgreSQL server is: AIAGENT_TEST_DATABASE_URL, else the local server, if it answers. When
 * neither answers, the run's global setup starts one from embedded-postgres and points AIAGENT_TEST_DATABASE_URL
 * at it, so the workers find it here.
 */
export function adminUrl(): Promise<string | undefined> {
  const override = process.env.AIAGENT_TEST_DATABASE_URL;
  return firstAnswering(override ? [override] : LOCAL_ADMIN_URLS);
}

/** A database of this test run's own on the tests' server; dropped by `drop()`. */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

let admin: Promise<string | undefined> | undefined;

/**
 * The admin URL, asked once: an answer is kept, a "none" is not (a worker that runs several files one after another
 * asks again in the next file instead of skipping every later one after one refused connection).
 */
async function adminBase(): Promise<string | undefined> {
  admin ??= adminUrl();
  const base = await admin;
  if (!base) admin = undefined;
  return base;
}

/**
 * The databases this process made and has not dropped yet (a test's, a template being built), dropped as it exits if
 * it ends without dropping them, through a short child process; an orderly run has none left by then, and starts
 * nothing. A worker that outlives its run's main process (a stopped run: the main process dropped the run's databases
 * as it exited, and the worker, still finishing a file, made another or built the template again) drops every
 * database of the run as it exits.
 */
const undropped = new Set<string>();
const parent = process.ppid;
let dropsAtExit = false;

function made(base: string, name: string): void {
  undropped.add(name);
  if (dropsAtExit) return;
  dropsAtExit = true;
  atExit(() => {
    const orphaned = process.ppid !== parent;
    if (undropped.size > 0 || orphaned) dropSync(base, [...undropped], orphaned);
  });
}

/**
 * Drops the named databases, and with `wholeRun` every database of this run, before it returns (a short child
 * process): for a process's exit, when nothing asynchronous runs any more.
 */
export function dropSync(base: string, names: string[], wholeRun: boolean): void {
  const script = `
    import pg from "pg";
    const c = new pg.Client({ connectionString: process.env.URL });
    await c.connect();
    const names = process.env.NAMES.split(" ").filter(Boolean);
    if (process.env.PREFIX) {
      const { rows } = await c.query("SELECT datname FROM pg_database WHERE datname LIKE $1", [process.env.PREFIX]);
      names.push(...rows.map((r) => r.datname));
    }
    for (const name of names) await c.query(\`DROP DATABASE IF EXISTS "\${name}" WITH (FORCE)\`);
    await c.end();`;
  spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: new URL("../..", import.meta.url),
    env: { ...process.env, URL: base, NAMES: names.join(" "), PREFIX: wholeRun ? runLike() : "" },
    stdio: "ignore",
    timeout: 30_000,
  });
}

/**
 * Databases of this test run share a prefix, so the run's teardown drops any a test left behind. Read when asked: the
 * run's global setup names the run (AIAGENT_TEST_RUN) after this module is loaded in its process, and a prefix taken
 * at load there was "adhoc", so that every run's teardown left the run's template behind.
 */
const runPrefix = () => `aiagent_test_${process.env.AIAGENT_TEST_RUN ?? "adhoc"}_`;
/** The LIKE pattern of this run's databases. */
const runLike = () => `${runPrefix().replace(/_/g, "\\_")}%`;

/** Drops every database of this test run (the global teardown). */
export async function dropRunDatabases(): Promise<void> {
  const base = await adminBase();
  if (!base) return;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      runLike(),
    ]);
    for (const r of rows) await c.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export async function postgresSkipReason(): Promise<string | undefined> {
  return (await adminBase())
    ? undefined
    : `no PostgreSQL server answers (set AIAGENT_TEST_DATABASE_URL, or run one on 127.0.0.1:5432) and ${
        embeddedPostgresUnavailable() ?? "embedded-postgres did not start one (see the run's first lines)"
      }`;
}

/**
 * Creates a fresh database for this run: by default with the schema up to date, copied from the run's migrated
 * template (CREATE DATABASE … TEMPLATE: about a second, where running the migrations takes several on a loaded
 * server); `empty` for a test of the migrations themselves or of a restore.
 */
export async function createTestDatabase(o: { empty?: boolean } = {}): Promise<TestDatabase> {
  const base = await adminBase();
  if (!base) throw new Error("no PostgreSQL server for tests");
  const name = `${runPrefix()}${process.pid}_${randomBytes(4).toString("hex")}`;
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const template = o.empty ? undefined : await migratedTemplate(base);
  made(base, name);
  try {
    await run(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  } catch (e) {
    // The template this process remembers is gone (dropped at another project's end): built again, once.
    if (!template || (e as { code?: string }).code !== "3D000") throw e;
    forgetTemplate();
    await run(`CREATE DATABASE ${name} TEMPLATE ${await migratedTemplate(base)}`);
  }
  return {
    url: databaseUrl(base, name),
    drop: async () => {
      await run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      undropped.delete(name);
    },
  };
}

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Taken by the process that builds the run's template; the others wait for it, then find it. */
const TEMPLATE_LOCK = 0x61697465; // "aite"
let template: Promise<string> | undefined;

/**
 * The run's database with every migration applied, built once by whichever worker needs it first. Its name carries
 * a digest of the migrations, so a template never serves a schema other than this build's; the run's teardown drops
 * it with the run's other databases.
 */
function migratedTemplate(base: string): Promise<string> {
  template ??= (async () => {
    // Loaded here, not at the top: vitest.config.ts reads this module for adminUrl.
    const { pgMigrations } = await import("../../src/storage/postgres/migrations.js");
    const { migrate } = await import("../../src/storage/postgres/store.js");
    const digest = createHash("sha256").update(JSON.stringify(pgMigrations)).digest("hex").slice(0, 8);
    const name = `${runPrefix()}tpl_${digest}`;
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
      const found = await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (found.rowCount === 0) {
        // Built under another name and renamed once complete: a worker that dies midway leaves no half template.
        const building = `${name}_${process.pid}`;
        made(base, building);
        await c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await c.query(`CREATE DATABASE ${building}`);
        const pool = new pg.Pool({ connectionString: databaseUrl(base, building), max: 1 });
        try {
          await migrate(pool);
        } finally {
          await pool.end();
        }
        await c.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
        undropped.delete(building);
      }
    } finally {
      await c.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]).catch(() => undefined);
      await c.end();
    }
    return name;
  })();
  // A failed build is tried again by the next database asked for.
  template.catch(forgetTemplate);
  return template;
}

function forgetTemplate(): void {
  template = undefined;
}
