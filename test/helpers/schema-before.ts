import Database from "better-sqlite3";
import pg from "pg";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { pgMigrations } from "../../src/storage/postgres/migrations.js";
import { migrations } from "../../src/storage/sqlite/migrations.js";
import { createTestDatabase } from "./postgres.js";

/** A SQLite file at `path` with the migrations before `version` applied, as an older release left it. */
export function sqliteBefore(path: string, version: number): Database.Database {
  const old = new Database(path);
  for (const m of migrations.filter((m) => m.version < version)) {
    old.exec(m.sql);
    m.after?.(old as never);
    old.pragma(`user_version = ${m.version}`);
  }
  return old;
}

/**
 * The PostgreSQL database at `url` with the migrations before `version` applied, as an older release left it, and
 * `seed` run on it; the connection is closed afterwards.
 */
export async function postgresBefore(
  url: string,
  version: number,
  seed: (client: pg.Client) => Promise<unknown>,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      "CREATE TABLE aiagent_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    for (const m of pgMigrations.filter((m) => m.version < version)) {
      await client.query(m.sql);
      await client.query("INSERT INTO aiagent_schema (version) VALUES ($1)", [m.version]);
    }
    await seed(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh PostgreSQL database as an older release left it (postgresBefore: the migrations before `version`, then
 * `seed`), opened as the service opens it, which runs the rest of the migrations; `check` reads it through the store.
 * The store is closed and the database dropped afterwards, whatever happened.
 */
export async function postgresMigratedFrom(
  version: number,
  seed: (client: pg.Client) => Promise<unknown>,
  check: (store: PgStore) => Promise<void>,
): Promise<void> {
  const database = await createTestDatabase({ empty: true });
  try {
    await postgresBefore(database.url, version, seed);
    const store = await openPgStore(database.url, { poolSize: 2 });
    try {
      await check(store);
    } finally {
      await store.close();
    }
  } finally {
    await database.drop();
  }
}
