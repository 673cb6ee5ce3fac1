// `node --import tsx bench/repro/refresh-token-plans.ts [--tokens 200000]`: which index each query on refresh_tokens
// uses on PostgreSQL, with and without `refresh_tokens_binding` (account, chatbot, user): a scratch database migrated
// by the service's code, `--tokens` sessions of two accounts (the first with four chatbots and 20,000 users), analyzed;
// each query's plan as PostgreSQL makes it for the values given (a custom plan: a statement's first five runs), for
// any values (the generic plan it may keep after them) and as it picks itself after six runs; EXPLAIN (ANALYZE,
// BUFFERS), so that the pages read show.
import { parseArgs } from "node:util";
import pg from "pg";
import { openPgStore } from "../../src/storage/postgres/index.js";
import { benchPostgres } from "../lib/postgres.js";

const { values: opt } = parseArgs({ options: { tokens: { type: "string", default: "200000" } } });
const N = Number(opt.tokens);
/** A custom plan (for the values), the generic one (for any), and PostgreSQL's own pick after six runs. */
const MODES = ["custom", "generic", "auto"] as const;
type Mode = (typeof MODES)[number];
const admin = await benchPostgres();
if (!admin) throw new Error("no PostgreSQL server answers");
const name = `rt_plans_${process.pid}`;
const root = new pg.Client({ connectionString: admin });
await root.connect();
await root.query(`CREATE DATABASE ${name}`);
const u = new URL(admin);
u.pathname = `/${name}`;
try {
  await (await openPgStore(u.toString(), { poolSize: 1 })).close();
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  const bots = ["b0", "b1", "b2", "b3", "c0"];
  await c.query(
    "INSERT INTO accounts (account_id, email, active, created_at) VALUES ('A', 'a@x', true, 1), ('B', 'b@x', true, 1)",
  );
  for (const b of bots)
    await c.query("INSERT INTO chatbots (chatbot_id, account_id, name, created_at) VALUES ($1, $2, $1, 1)", [
      b,
      b.startsWith("b") ? "A" : "B",
    ]);
  // Account A: 90 % of the sessions, its four chatbots 70/20/8/2 %, 20,000 users; account B the rest.
  await c.query(
    `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at)
     SELECT md5(i::text), gen_random_uuid()::text, CASE WHEN i % 10 = 0 THEN 'B' ELSE 'A' END,
       CASE WHEN i % 10 = 0 THEN 'c0' WHEN i % 100 < 70 THEN 'b0' WHEN i % 100 < 90 THEN 'b1'
         WHEN i % 100 < 98 THEN 'b2' ELSE 'b3' END,
       'u' || (i % 20000), i, i + 1000000 FROM generate_series(1, $1::int) i`,
    [N],
  );
  await c.query("VACUUM ANALYZE");
  const SCOPE = "account_id = $1 AND ($2::text IS NULL OR chatbot_id = $2) AND ($3::text IS NULL OR user_id = $3)";
  const queries: [string, string][] = [
    ["revoke's pairs", `SELECT DISTINCT chatbot_id, user_id FROM refresh_tokens WHERE ${SCOPE}`],
    ["revoke", `UPDATE refresh_tokens SET revoked_at = $4 WHERE revoked_at IS NULL AND ${SCOPE}`],
    [
      "list",
      `SELECT * FROM refresh_tokens WHERE ${SCOPE} ORDER BY created_at DESC, session_id DESC LIMIT $4 OFFSET $5`,
    ],
    ["privacy's delete", "DELETE FROM refresh_tokens WHERE account_id = $1 AND user_id = $2"],
  ];
  const scopes: [string, unknown[]][] = [
    ["chatbot b3 (2 %)", ["A", "b3", null]],
    ["chatbot b0 (70 %)", ["A", "b0", null]],
    ["chatbot and user", ["A", "b1", "u17"]],
    ["user", ["A", null, "u17"]],
    ["account", ["A", null, null]],
  ];
  /** The plan of `sql` for `values`, custom or generic, in a transaction rolled back (the index dropped in it). */
  const plan = async (sql: string, values: unknown[], mode: Mode, withoutBinding: boolean) => {
    await c.query("BEGIN");
    try {
      if (withoutBinding) await c.query("DROP INDEX refresh_tokens_binding");
      await c.query(`SET LOCAL plan_cache_mode = ${mode === "auto" ? "auto" : `force_${mode}_plan`}`);
      await c.query("DEALLOCATE ALL");
      const types = values.map((v) => (typeof v === "number" ? "bigint" : "text"));
      await c.query(`PREPARE q (${types.join(", ")}) AS ${sql}`);
      const lits = values.map((v) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${v}'`));
      // PostgreSQL's own choice: five custom plans, then the generic one if it costs no more than their average.
      if (mode === "auto")
        for (let i = 0; i < 6; i++) {
          await c.query("SAVEPOINT run");
          await c.query(`EXECUTE q (${lits.join(", ")})`);
          await c.query("ROLLBACK TO SAVEPOINT run");
        }
      const { rows } = await c.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE q (${lits.join(", ")})`,
      );
      return rows
        .map((r) => String(r["QUERY PLAN"]))
        .filter((l) => /Scan|Sort|Unique|Aggregate|Buffers|Index Cond|Filter/.test(l))
        .map((l) => `      ${l.trim()}`)
        .join("\n");
    } finally {
      await c.query("ROLLBACK");
    }
  };
  for (const without of [false, true]) {
    console.log(without ? "\n=== without refresh_tokens_binding" : "=== as migrated");
    for (const [what, sql] of queries) {
      const forScopes: [string, unknown[]][] =
        what === "privacy's delete"
          ? [["user", ["A", "u17"]]]
          : scopes.map(([s, v]) => [s, what === "list" ? [...v, 21, 0] : what === "revoke" ? [...v, 5] : v]);
      for (const [scope, values] of forScopes)
        for (const mode of MODES)
          console.log(`  ${what}, ${scope}, ${mode}:\n${await plan(sql, values, mode, without)}`);
    }
  }
  await c.end();
} finally {
  await root.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await root.end();
}
