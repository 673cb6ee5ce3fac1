import { randomBytes } from "node:crypto";
import pg from "pg";
import { firstAnswering, LOCAL_ADMIN_URLS } from "../../src/storage/postgres/probe.js";
import { embeddedPostgresUnavailable } from "./embedded-postgres.js";

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

/** Databases of this test run share a prefix, so the run's teardown drops any a test left behind. */
const RUN_PREFIX = `aiagent_test_${process.env.AIAGENT_TEST_RUN ?? "adhoc"}_`;

/** Drops every database of this test run (the global teardown). */
export async function dropRunDatabases(): Promise<void> {
  admin ??= adminUrl();
  const base = await admin;
  if (!base) return;
  const c = new pg.Client({ connectionString: base });
  await c.connect();
  try {
    const { rows } = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `${RUN_PREFIX.replace(/_/g, "\\_")}%`,
    ]);
    for (const r of rows) await c.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export async function postgresSkipReason(): Promise<string | undefined> {
  admin ??= adminUrl();
  return (await admin)
    ? undefined
    : `no PostgreSQL server answers (set AIAGENT_TEST_DATABASE_URL, or run one on 127.0.0.1:5432) and ${
        embeddedPostgresUnavailable() ?? "embedded-postgres did not start one (see the run's first lines)"
      }`;
}

/** Creates a fresh, empty database for this run. */
export async function createTestDatabase(): Promise<TestDatabase> {
  admin ??= adminUrl();
  const base = await admin;
  if (!base) throw new Error("no PostgreSQL server for tests");
  const name = `${RUN_PREFIX}${process.pid}_${randomBytes(4).toString("hex")}`;
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await run(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
