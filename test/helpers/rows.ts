import type { App } from "../../src/app.js";
import { PgStore } from "../../src/storage/postgres/index.js";
import { SqliteStore } from "../../src/storage/sqlite/index.js";

/** Rows of a plain SELECT (with ? placeholders) read straight from whichever back end the app runs on. */
export async function selectRows<T>(app: App, sql: string, params: unknown[] = []): Promise<T[]> {
  if (app.store instanceof SqliteStore) return app.store.db.prepare(sql).all(...params) as T[];
  if (app.store instanceof PgStore) {
    let i = 0;
    return (
      await app.store.pool.query(
        sql.replace(/\?/g, () => `$${++i}`),
        params,
      )
    ).rows as T[];
  }
  throw new Error("unknown storage back end");
}

/** count(*) of a SELECT on any back end. */
export async function countRows(app: App, sql: string, params: unknown[] = []): Promise<number> {
  const [r] = await selectRows<{ n: number | string }>(app, sql, params);
  return Number(r?.n ?? 0);
}
