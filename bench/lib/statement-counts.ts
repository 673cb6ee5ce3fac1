import { createRequire } from "node:module";

/**
 * Counts the SQLite statements this process runs through better-sqlite3 while `counting` is on, by kind and text
 * (`run`, `get`, `all`, `iterate` of a prepared statement; `exec` and `prepare` of the database): installed before the
 * service is built, so that every statement it prepares is seen.
 */
export function statementCounts(): { counting: boolean; counts: Map<string, number> } {
  const state = { counting: false, counts: new Map<string, number>() };
  const count = (k: string) => {
    if (state.counting) state.counts.set(k, (state.counts.get(k) ?? 0) + 1);
  };
  const short = (sql: string) => sql.replace(/\s+/g, " ").trim().slice(0, 100);
  const Database = createRequire(import.meta.url)("better-sqlite3");
  const Statement = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1"));
  for (const m of ["run", "get", "all", "iterate"]) {
    const original = Statement[m];
    Statement[m] = function (this: { source: string }, ...args: unknown[]) {
      count(`${m} ${short(this.source)}`);
      return original.apply(this, args);
    };
  }
  for (const m of ["exec", "prepare"]) {
    const original = Database.prototype[m];
    Database.prototype[m] = function (this: unknown, sql: string, ...args: unknown[]) {
      count(`${m} ${short(sql)}`);
      return original.call(this, sql, ...args);
    };
  }
  return state;
}
