import pg from "pg";

/** Where a PostgreSQL server usually answers on a developer's machine or CI: the local one, as postgres or root. */
export const LOCAL_ADMIN_URLS: readonly string[] = [
  "postgres://postgres@127.0.0.1:5432/postgres",
  "postgres://root@127.0.0.1:5432/postgres",
];

/** The first of `urls` whose server answers a query within 2 s; undefined when none does. */
export async function firstAnswering(urls: readonly string[]): Promise<string | undefined> {
  for (const url of urls) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query("SELECT 1");
      return url;
    } catch {
      // the next one
    } finally {
      await c.end().catch(() => undefined);
    }
  }
  return undefined;
}
