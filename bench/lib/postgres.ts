import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";
import { openPgStore } from "../../src/storage/postgres/index.js";
import { firstAnswering, LOCAL_ADMIN_URLS } from "../../src/storage/postgres/probe.js";
import type { Dataset } from "./dataset.js";
import { cpuMicros } from "./proc.js";

/**
 * The PostgreSQL server the PostgreSQL rows run on: AIAGENT_BENCH_DATABASE_URL (an admin URL), else the local one
 * on 127.0.0.1:5432 when it answers; undefined when none does.
 */
export function benchPostgres(): Promise<string | undefined> {
  const override = process.env.AIAGENT_BENCH_DATABASE_URL;
  return firstAnswering(override ? [override] : LOCAL_ADMIN_URLS);
}

/** A database of this run's own, holding a copy of a dataset; dropped by `drop()`. */
export interface PgDataset {
  url: string;
  server: string;
  seconds: number;
  drop(): Promise<void>;
}

/** Tables in the order their foreign keys allow; the migrations' bookkeeping and the abuse counters stay empty. */
const TABLES = [
  "accounts",
  "api_keys",
  "chatbots",
  "refresh_tokens",
  "token_revocations",
  "signing_keys",
  "contacts",
  "conversations",
  "messages",
  "conversation_ratings",
];
const BATCH = 5000;

/**
 * Copies a seeded SQLite dataset into a new PostgreSQL database migrated by the service's own code: the same rows
 * (the same accounts, API key hashes, signing keys sealed under the same secret), so both back ends serve the same
 * data to the same requests. Row by row through `unnest` arrays, a batch per statement.
 */
export async function copyToPostgres(admin: string, d: Dataset, log: (s: string) => void): Promise<PgDataset> {
  const started = process.hrtime.bigint();
  const name = `aiagent_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const adminClient = new pg.Client({ connectionString: admin });
  await adminClient.connect();
  const drop = async () => {
    await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await adminClient.end().catch(() => undefined);
  };
  try {
    await adminClient.query(`CREATE DATABASE ${name}`);
    const u = new URL(admin);
    u.pathname = `/${name}`;
    const url = u.toString();
    // The schema as the service makes it.
    await (await openPgStore(url, { poolSize: 1 })).close();
    const lite = new Database(d.path, { readonly: true, fileMustExist: true });
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const server = (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
      // Foreign keys are checked by the dataset's own build; skipping the per-row checks halves the copy (superuser).
      await c.query("SET session_replication_role = replica").catch(() => undefined);
      for (const table of TABLES) {
        const pgCols = (
          await c.query<{ column_name: string; data_type: string }>(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
            [table],
          )
        ).rows;
        const liteCols = new Set(
          (lite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((x) => x.name),
        );
        const cols = pgCols.filter((x) => liteCols.has(x.column_name));
        if (cols.length === 0) continue;
        const types = cols.map((x) => (x.data_type === "character varying" ? "text" : x.data_type));
        const sql = `INSERT INTO ${table} (${cols.map((x) => x.column_name).join(", ")}) SELECT * FROM unnest(${types
          .map((t, i) => `$${i + 1}::${t}[]`)
          .join(", ")})`;
        const columns: unknown[][] = cols.map(() => []);
        let rows = 0;
        const flush = async () => {
          if (columns[0]!.length === 0) return;
          await c.query(sql, columns);
          for (const col of columns) col.length = 0;
        };
        const select = lite.prepare(`SELECT ${cols.map((x) => x.column_name).join(", ")} FROM ${table}`).raw();
        for (const row of select.iterate() as Iterable<unknown[]>) {
          for (let i = 0; i < cols.length; i++)
            columns[i]!.push(types[i] === "boolean" && row[i] !== null ? Boolean(row[i]) : row[i]);
          if (++rows % BATCH === 0) await flush();
        }
        await flush();
      }
      await c.query("SET session_replication_role = DEFAULT").catch(() => undefined);
      // Statistics and the visibility map, as a database that has been running a while would have them.
      await c.query("VACUUM ANALYZE");
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      log(`dataset ${d.scale} copied into PostgreSQL ${server} (${name}) in ${seconds.toFixed(1)} s`);
      return { url, server, seconds, drop };
    } finally {
      await c.end().catch(() => undefined);
      lite.close();
    }
  } catch (e) {
    await drop();
    throw e;
  }
}

/** How long no vacuum or analyze must have run before a PostgreSQL row starts. */
const QUIET_MS = 2000;

/** What settlePostgres found and did, for the log. */
export interface PgSettled {
  /** Vacuums and analyzes running on the server (any database; autovacuum's or a client's) when it began. */
  running: number;
  /** How long it waited for them to end (at most the bound given). */
  waitedMs: number;
  /** Whether some were still running when the bound was reached. */
  timedOut: boolean;
  /** How long the database's VACUUM ANALYZE took. */
  vacuumMs: number;
}

/**
 * Before a PostgreSQL row is measured: no leftover work of the server beside it. Waits (polling, at most `boundMs`)
 * until no vacuum or analyze has run on the server for two seconds, whichever database it serves and whoever started
 * it (an autovacuum worker on a previous run's writes, or on the rows before this one), then vacuums and analyzes
 * `url`'s database itself, so that what the rows before this one wrote leaves no autovacuum or autoanalyze due to
 * start in the middle of it. No CHECKPOINT: right before a row, it would make the row's every first write of a page
 * after it a full-page image in the WAL (docs/performance.md, "Session 24").
 */
export async function settlePostgres(url: string, boundMs = 120_000): Promise<PgSettled> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const busy = async () =>
      Number(
        (
          await c.query<{ n: string }>(
            `SELECT (SELECT count(*) FROM pg_stat_progress_vacuum) + (SELECT count(*) FROM pg_stat_progress_analyze)
               + (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'
                    AND pid NOT IN (SELECT pid FROM pg_stat_progress_vacuum)
                    AND pid NOT IN (SELECT pid FROM pg_stat_progress_analyze)) AS n`,
          )
        ).rows[0]!.n,
      );
    // Quiet for QUIET_MS on end: one vacuum queued after another (a worker's next table, a script's next VACUUM)
    // leaves gaps shorter than that between them.
    const started = Date.now();
    const running = await busy();
    let left = running;
    let quietSince = running > 0 ? undefined : started;
    while (Date.now() - started < boundMs) {
      const now = Date.now();
      if (left > 0) quietSince = undefined;
      else if (quietSince === undefined) quietSince = now;
      else if (now - quietSince >= QUIET_MS) break;
      await new Promise((r) => setTimeout(r, 250));
      left = await busy();
    }
    const waitedMs = Date.now() - started;
    const settleStarted = Date.now();
    await c.query("VACUUM ANALYZE");
    return { running, waitedMs, timedOut: left > 0, vacuumMs: Date.now() - settleStarted };
  } finally {
    await c.end();
  }
}

/**
 * The CPU (µs) each server backend connected to `url`'s database has used so far, by pid, from /proc: a server on
 * this machine only (empty otherwise). The server's shared processes (WAL writer, checkpointer) are left out, and
 * so is other work on the same server: what the service's own statements cost PostgreSQL.
 */
export async function backendCpu(url: string): Promise<Map<number, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    const used = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        used.set(pid, cpuMicros(pid));
      } catch {
        // Gone meanwhile, or not on this machine.
      }
    }
    return used;
  } finally {
    await c.end();
  }
}

/** The CPU (µs) the backends of `before` and `after` used between them (a backend that started meanwhile: all of it). */
export function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let n = 0;
  for (const [pid, us] of after) n += us - (before.get(pid) ?? 0);
  return n;
}
