import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { Store } from "../../../src/domain/store.js";
import { openPgStore } from "../../../src/storage/postgres/index.js";
import { openSqliteStore } from "../../../src/storage/sqlite/index.js";
import { pgbouncerSkipReason, pooledUrl } from "../../helpers/pgbouncer.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../../helpers/postgres.js";

/** One back end under the contract: a fresh, empty store per call, and a way to make it fail. */
export interface Backend {
  name: string;
  /** Why it cannot run here (the suite is skipped, naming it), or undefined. */
  skipReason(): Promise<string | undefined>;
  open(): Promise<Harness>;
  /** After the last case (drops a server database). */
  teardown?(): Promise<void>;
}

export interface Harness {
  store: Store;
  /** Another client holds the back end's write lock until the returned function is called. */
  holdWriteLock(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** SQLite: a real file in a temporary directory, group commit on, a short busy timeout so a held lock shows fast. */
export const sqliteBackend: Backend = {
  name: "sqlite",
  skipReason: async () => undefined,
  async open() {
    const dir = mkdtempSync(join(tmpdir(), "aiagent-contract-"));
    const path = join(dir, "contract.db");
    const store = openSqliteStore(path, { synchronous: "FULL", busyTimeoutMs: 50 });
    return {
      store,
      async holdWriteLock() {
        const other = new Database(path);
        other.exec("BEGIN IMMEDIATE");
        return async () => {
          other.exec("ROLLBACK");
          other.close();
        };
      },
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const TABLES =
  "accounts, api_keys, chatbots, refresh_tokens, token_revocations, signing_keys, contacts, conversations, messages, demo_setup, rate_limits, refresh_token_rotations, session_policies, launch_codes, members, mail_outbox";

/**
 * What `TRUNCATE ${TABLES} CASCADE` empties (those tables and every table that references one of them, transitively),
 * emptied instead by DELETE statements, children first, in one transaction: on a handful of rows a DELETE costs a few
 * milliseconds, where a TRUNCATE gives each of some fifty tables and their indexes new files (0.3 to 1 s a case on a
 * loaded machine, twice a case for the two PostgreSQL back ends). Falls back to the TRUNCATE if the references form a
 * circle between tables (none do today).
 */
async function emptyingStatements(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ child: string; parent: string }>(
      `SELECT con.conrelid::regclass::text AS child, con.confrelid::regclass::text AS parent
         FROM pg_constraint con JOIN pg_class k ON k.oid = con.conrelid
        WHERE con.contype = 'f' AND k.relnamespace = 'public'::regnamespace`,
    );
    const children = new Map<string, Set<string>>();
    for (const r of rows) {
      if (r.child === r.parent) continue; // a self-reference: one DELETE removes all its rows together
      if (!children.has(r.parent)) children.set(r.parent, new Set());
      children.get(r.parent)!.add(r.child);
    }
    // The tables the TRUNCATE … CASCADE reaches.
    const reached = new Set(TABLES.split(", "));
    for (const t of reached) for (const child of children.get(t) ?? []) reached.add(child);
    // Children before parents; a table is deleted from only once every table referencing it was.
    const order: string[] = [];
    const done = new Set<string>();
    const visiting = new Set<string>();
    const visit = (t: string): boolean => {
      if (done.has(t)) return true;
      if (visiting.has(t)) return false;
      visiting.add(t);
      for (const child of children.get(t) ?? []) if (!visit(child)) return false;
      visiting.delete(t);
      done.add(t);
      order.push(t);
      return true;
    };
    for (const t of reached) if (!visit(t)) return `TRUNCATE ${TABLES} CASCADE`;
    return `BEGIN; ${order.map((t) => `DELETE FROM ${t};`).join(" ")} COMMIT;`;
  } finally {
    await c.end();
  }
}

/**
 * PostgreSQL: one database of this run's own, emptied before each case; a short lock timeout so a held lock shows.
 * `pooled`: the store reaches it through the run's PgBouncer in transaction pooling mode (LISTEN goes direct).
 */
function postgresBackendOf(pooled: boolean): Backend {
  let database: Promise<TestDatabase> | undefined;
  let emptying: Promise<string> | undefined;
  return {
    name: pooled ? "postgres through pgbouncer (transaction pooling)" : "postgres",
    skipReason: async () => (await postgresSkipReason()) ?? (pooled ? pgbouncerSkipReason() : undefined),
    async open() {
      database ??= createTestDatabase();
      const { url } = await database;
      const store = await openPgStore(
        pooled ? pooledUrl(url) : url,
        pooled
          ? { lockTimeoutMs: 1000, poolSize: 4, pooler: "transaction", listenUrl: url }
          : { lockTimeoutMs: 1000, poolSize: 4 },
      );
      emptying ??= emptyingStatements(url);
      await store.pool.query(await emptying);
      return {
        store,
        async holdWriteLock() {
          const other = new pg.Client({ connectionString: url });
          await other.connect();
          await other.query("BEGIN");
          await other.query(`LOCK TABLE ${TABLES} IN ACCESS EXCLUSIVE MODE`);
          return async () => {
            await other.query("ROLLBACK");
            await other.end();
          };
        },
        close: () => store.close(),
      };
    },
    async teardown() {
      if (database) await (await database).drop();
      database = undefined;
      emptying = undefined;
    },
  };
}

export const postgresBackend = postgresBackendOf(false);
export const pgbouncerBackend = postgresBackendOf(true);

/** Every back end the contract runs on. */
export const backends: Backend[] = [sqliteBackend, postgresBackend, pgbouncerBackend];
