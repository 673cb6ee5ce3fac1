import type { Db } from "../../src/storage/sqlite/index.js";

/** The tables that grow with use, on either back end: no statement may read one whole. */
export const GROWING = [
  "contacts",
  "conversations",
  "messages",
  "refresh_tokens",
  "refresh_token_rotations",
  "launch_codes",
  "token_revocations",
  "api_keys",
  "accounts",
  "chatbots",
];

/** Records every SQL text prepared on a database until stop() (repositories prepare theirs when built or first used). */
export function recordPrepares(db: Db): { stop(): string[] } {
  const seen: string[] = [];
  const prepare = db.prepare;
  (db as { prepare: unknown }).prepare = function (this: Db, sql: string) {
    if (!seen.includes(sql)) seen.push(sql);
    return prepare.call(this, sql);
  };
  return {
    stop() {
      (db as { prepare: unknown }).prepare = prepare;
      return seen;
    },
  };
}

const SAMPLE: Record<string, unknown> = {
  accountId: "a",
  search: "abc",
  liveSince: 0,
  limit: 11,
  offset: 0,
  budget: 1000,
  need: 11,
  match: '"abc"',
  lo: 0,
  hi: 1,
  id: "x",
  now: 0,
};

/** EXPLAIN QUERY PLAN of a statement, its parameters bound to sample values; one line per plan step. */
export function planOf(db: Db, sql: string): string[] {
  const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1]!))];
  const positional = (sql.replace(/'[^']*'/g, "").match(/\?/g) ?? []).length;
  const st = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const args: unknown[] = named.length
    ? [Object.fromEntries(named.map((n) => [n, SAMPLE[n] ?? "x"]))]
    : Array.from({ length: positional }, () => "x");
  return (st.all(...args) as { detail: string }[]).map((r) => r.detail);
}
