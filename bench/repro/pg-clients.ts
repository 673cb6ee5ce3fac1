// The PostgreSQL client's own CPU per statement: node-postgres (`pg`, what the service uses) against `postgres`
// (postgres.js), on the token issue's statements, the same server, the same concurrency, one after the other.
//
//   (cd /tmp/pgjs && npm init -y && npm install postgres@3)   # kept out of the repository's dependencies
//   PG_JS_DIR=/tmp/pgjs node --import tsx bench/repro/pg-clients.ts [--n 4000] [--rounds 3]
//
// Reports this process's CPU (user + system) per unit: the client's cost only, PostgreSQL's backends excluded. A
// unit is either one indexed read (the API key joined with its account) or one unit of work (BEGIN, the refresh
// token's insert, the contact's upsert, COMMIT), each statement prepared once per connection by both clients.
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";

const { values: opt } = parseArgs({
  options: { n: { type: "string", default: "4000" }, rounds: { type: "string", default: "3" } },
});
const N = Number(opt.n);
const ROUNDS = Number(opt.rounds);
const CONCURRENCY = 16;
const POOL = 10;
const admin = process.env.AIAGENT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dir = process.env.PG_JS_DIR;
if (!dir) throw new Error("PG_JS_DIR: a directory where `npm install postgres@3` was run");
/** The part of postgres.js this uses (it is not a dependency of the repository, so its types are not either). */
interface PgJs {
  unsafe(text: string, values: unknown[], o: { prepare: boolean }): Promise<unknown>;
  begin(fn: (tx: PgJs) => Promise<unknown>): Promise<unknown>;
  end(): Promise<void>;
}
const postgres = createRequire(join(dir, "package.json"))("postgres") as (url: string, o: object) => PgJs;

const dbName = `pg_clients_${process.pid}`;
const root = new pg.Client({ connectionString: admin });
await root.connect();
await root.query(`CREATE DATABASE ${dbName}`);
const url = admin.replace(/\/[^/]*$/, `/${dbName}`);

const READ =
  "SELECT k.*, a.email, a.active FROM api_keys k JOIN accounts a ON a.account_id = k.account_id WHERE k.key_hash = $1";
const INSERT =
  "INSERT INTO refresh_tokens (token_hash, session_id, account_id, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)";
const UPSERT =
  "INSERT INTO contacts (account_id, user_id, created_at, latest_at) VALUES ($1, $2, $3, $3) ON CONFLICT (account_id, user_id) DO UPDATE SET latest_at = greatest(contacts.latest_at, excluded.latest_at)";

async function setup() {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`
    CREATE TABLE accounts (account_id text PRIMARY KEY, email text NOT NULL, active boolean NOT NULL);
    CREATE TABLE api_keys (api_key_id text PRIMARY KEY, account_id text NOT NULL, key_hash text NOT NULL UNIQUE,
      hint text NOT NULL, created_at bigint NOT NULL, revoked_at bigint, last_used_at bigint);
    CREATE TABLE refresh_tokens (token_hash text PRIMARY KEY, session_id text NOT NULL UNIQUE, account_id text NOT NULL,
      user_id text NOT NULL, created_at bigint NOT NULL, expires_at bigint NOT NULL);
    CREATE INDEX refresh_tokens_user ON refresh_tokens (account_id, user_id, created_at DESC);
    CREATE TABLE contacts (account_id text NOT NULL, user_id text NOT NULL, created_at bigint NOT NULL,
      latest_at bigint NOT NULL, PRIMARY KEY (account_id, user_id));
    INSERT INTO accounts VALUES ('acc', 'owner@example.com', true);
    INSERT INTO api_keys VALUES ('key', 'acc', 'hash', 'cak_abcd', 1, NULL, NULL);`);
  await c.end();
}

let seq = 0;
const unitValues = () => {
  const i = ++seq;
  return { hash: `h${process.pid}-${i}`, session: `s${process.pid}-${i}`, user: `u${i % 512}`, at: Date.now() };
};

interface Driver {
  read(): Promise<unknown>;
  unit(): Promise<unknown>;
  end(): Promise<void>;
}

function nodePostgres(): Driver {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  return {
    read: () => pool.query({ name: "read", text: READ, values: ["hash"] }),
    unit: async () => {
      const v = unitValues();
      const c = await pool.connect();
      try {
        await c.query("BEGIN");
        await c.query({ name: "ins", text: INSERT, values: [v.hash, v.session, "acc", v.user, v.at, v.at + 1] });
        await c.query({ name: "ups", text: UPSERT, values: ["acc", v.user, v.at] });
        await c.query("COMMIT");
      } finally {
        c.release();
      }
    },
    end: () => pool.end(),
  };
}

function postgresJs(): Driver {
  const sql = postgres(url, { max: POOL, prepare: true, onnotice: () => undefined });
  return {
    read: () => sql.unsafe(READ, ["hash"], { prepare: true }),
    unit: () => {
      const v = unitValues();
      return sql.begin(async (tx) => {
        await tx.unsafe(INSERT, [v.hash, v.session, "acc", v.user, v.at, v.at + 1], { prepare: true });
        await tx.unsafe(UPSERT, ["acc", v.user, v.at], { prepare: true });
      });
    },
    end: () => sql.end(),
  };
}

/** Runs `n` calls of `op`, CONCURRENCY at a time; answers this process's CPU µs per call and wall µs per call. */
async function drive(op: () => Promise<unknown>, n: number): Promise<{ cpu: number; wall: number }> {
  let next = 0;
  const before = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next++;
        await op();
      }
    }),
  );
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / n, wall: ((performance.now() - t0) * 1000) / n };
}

try {
  await setup();
  const drivers = { pg: nodePostgres(), postgres: postgresJs() };
  // Warm both (connections opened, statements prepared).
  for (const d of Object.values(drivers)) {
    await drive(d.read, 500);
    await drive(d.unit, 200);
  }
  const rows: string[] = [];
  for (let r = 1; r <= ROUNDS; r++)
    for (const [name, d] of Object.entries(drivers)) {
      const read = await drive(d.read, N);
      const unit = await drive(d.unit, Math.floor(N / 4));
      rows.push(
        `round ${r} ${name.padEnd(8)} read ${read.cpu.toFixed(1).padStart(6)} µs CPU (${read.wall.toFixed(0)} µs wall)` +
          `   unit ${unit.cpu.toFixed(1).padStart(6)} µs CPU (${unit.wall.toFixed(0)} µs wall)`,
      );
      console.log(rows.at(-1));
    }
  for (const d of Object.values(drivers)) await d.end();
} finally {
  await root.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await root.end();
}
