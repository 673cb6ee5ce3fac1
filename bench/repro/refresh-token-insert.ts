import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { cachedDataset } from "../lib/dataset.js";

// What a token issue's one write costs in better-sqlite3, by how the refresh_tokens table is laid out: as migrated
// (a rowid table whose TEXT primary key is an index of its own, and four more indexes: six B-trees per insert),
// without the binding index (account, chatbot, user), and as a WITHOUT ROWID table keyed by the token hash (five).
// The schema is read from the bench's 10k dataset (`npm run bench -- --quick` seeds it once); each variant gets a
// scratch file with `--rows` tokens already in it, then `--inserts` more, one per savepoint, 16 units per
// transaction as group commit makes them, synchronous=OFF so that only the CPU is timed. Also prints the plan of the
// revocation by chatbot with and without the binding index.
//
//   node --import tsx bench/repro/refresh-token-insert.ts [--rows 200000] [--inserts 20000] [--rounds 3]
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values: opt } = parseArgs({
  options: {
    rows: { type: "string", default: "200000" },
    inserts: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const source = new Database(cachedDataset(opt.cache!, "10k"), { readonly: true });
const schema = source
  .prepare<[], { type: string; name: string; sql: string }>(
    "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'refresh_tokens' AND sql IS NOT NULL AND type != 'trigger'",
  )
  .all();
source.close();
const table = schema.find((s) => s.type === "table")!.sql.replace(/REFERENCES \w+\(\w+\)/g, "");
const indexes = schema.filter((s) => s.type === "index");

const variants: Record<string, { table: string; indexes: string[] }> = {
  "as migrated (6 B-trees)": { table, indexes: indexes.map((i) => i.sql) },
  "without refresh_tokens_binding (5)": {
    table,
    indexes: indexes.filter((i) => i.name !== "refresh_tokens_binding").map((i) => i.sql),
  },
  "WITHOUT ROWID, keyed by token_hash (5)": {
    table: `${table.trimEnd()}, WITHOUT ROWID`,
    indexes: indexes.map((i) => i.sql),
  },
};

const work = mkdtempSync(join(tmpdir(), "aiagent-rt-insert-"));
const row = (i: number, at: number) => [
  randomBytes(32).toString("base64url"),
  randomUUID(),
  `acct-${i % 100}`,
  `bot-${i % 1000}`,
  `user-${i}`,
  at,
  at + 30 * 86_400_000,
  null,
  at,
  "",
  "Mozilla/5.0",
];
const INSERT = `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at,
  revoked_at, last_used_at, last_origin, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
try {
  const dbs = Object.entries(variants).map(([name, v], n) => {
    const db = new Database(join(work, `v${n}.db`));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    db.exec(v.table);
    for (const sql of v.indexes) db.exec(sql);
    const insert = db.prepare(INSERT);
    db.transaction(() => {
      for (let i = 0; i < Number(opt.rows); i++) insert.run(...row(i, Date.now() - i));
    })();
    return { name, db, insert };
  });
  for (const { name, db } of dbs) {
    const plan = db
      .prepare(
        "EXPLAIN QUERY PLAN SELECT DISTINCT chatbot_id, user_id FROM refresh_tokens WHERE account_id = ? AND (? IS NULL OR chatbot_id = ?) AND (? IS NULL OR user_id = ?)",
      )
      .all("acct-1", "bot-1", "bot-1", null, null)
      .map((r) => (r as { detail: string }).detail);
    console.log(`${name}: revocation by chatbot: ${plan.join("; ")}`);
  }
  const n = Number(opt.inserts);
  for (let round = 1; round <= Number(opt.rounds); round++)
    for (const { name, db, insert } of round % 2 ? dbs : [...dbs].reverse()) {
      const rows = Array.from({ length: n }, (_, i) => row(1_000_000 * round + i, Date.now()));
      const before = process.cpuUsage();
      for (let i = 0; i < n; i += 16) {
        db.exec("BEGIN");
        for (let j = i; j < Math.min(n, i + 16); j++) {
          db.exec("SAVEPOINT unit");
          insert.run(...rows[j]!);
          db.exec("RELEASE unit");
        }
        db.exec("COMMIT");
      }
      const cpu = process.cpuUsage(before);
      console.log(
        `round ${round}: ${name}: ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU per unit (insert in its savepoint)`,
      );
    }
  for (const { db } of dbs) db.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
