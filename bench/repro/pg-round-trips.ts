// The PostgreSQL client's own CPU for one round trip less per token issue: the six statements (the key's
// and the chatbot's reads, then BEGIN, the refresh token's insert, the contact's upsert, COMMIT) sent as the service
// sends them today (two pipelines, each on a connection of the pool) against all six in one pipeline, with the
// service's own `pipeline` (src/storage/postgres/pipeline.ts), the same server, the same concurrency, alternated.
//
//   node --import tsx bench/repro/pg-round-trips.ts [--n 4000] [--rounds 4]
//
// Reports this process's CPU (user + system) per issue: the client's cost only, PostgreSQL's backends excluded.
import { parseArgs } from "node:util";
import pg from "pg";
import { pipeline, type Statement } from "../../src/storage/postgres/pipeline.js";

const { values: opt } = parseArgs({
  options: { n: { type: "string", default: "4000" }, rounds: { type: "string", default: "4" } },
});
const N = Number(opt.n);
const ROUNDS = Number(opt.rounds);
const CONCURRENCY = 16;
const admin = process.env.AIAGENT_BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const dbName = `pg_round_trips_${process.pid}`;
const root = new pg.Client({ connectionString: admin });
await root.connect();
await root.query(`CREATE DATABASE ${dbName}`);
const url = admin.replace(/\/[^/]*$/, `/${dbName}`);

const setup = new pg.Client({ connectionString: url });
await setup.connect();
await setup.query(`
  CREATE TABLE accounts (account_id text PRIMARY KEY, email text NOT NULL, active boolean NOT NULL);
  CREATE TABLE api_keys (api_key_id text PRIMARY KEY, account_id text NOT NULL, key_hash text NOT NULL UNIQUE,
    revoked_at bigint);
  CREATE TABLE chatbots (chatbot_id text PRIMARY KEY, account_id text NOT NULL, active boolean NOT NULL);
  CREATE TABLE refresh_tokens (token_hash text PRIMARY KEY, session_id text NOT NULL UNIQUE, account_id text NOT NULL,
    user_id text NOT NULL, created_at bigint NOT NULL, expires_at bigint NOT NULL);
  CREATE TABLE contacts (account_id text NOT NULL, user_id text NOT NULL, created_at bigint NOT NULL,
    latest_at bigint NOT NULL, PRIMARY KEY (account_id, user_id));
  INSERT INTO accounts VALUES ('acc', 'owner@example.com', true);
  INSERT INTO api_keys VALUES ('key', 'acc', 'hash', NULL);
  INSERT INTO chatbots VALUES ('bot', 'acc', true);`);
await setup.end();

const pool = new pg.Pool({ connectionString: url, max: 10 });
// The database is dropped at the end with its connections: their going away is expected.
pool.on("error", () => undefined);
let seq = 0;
const reads = (): Statement[] => [
  {
    name: "key",
    text: "SELECT k.*, a.email, a.active FROM api_keys k JOIN accounts a USING (account_id) WHERE k.key_hash = $1",
    values: ["hash"],
  },
  { name: "bot", text: "SELECT * FROM chatbots WHERE chatbot_id = $1", values: ["bot"] },
];
const writes = (): Statement[] => {
  const i = ++seq;
  const at = Date.now();
  return [
    { text: "BEGIN" },
    {
      name: "insert",
      text: "INSERT INTO refresh_tokens VALUES ($1, $2, $3, $4, $5, $6)",
      values: [`h${i}`, `s${i}`, "acc", `u${i % 512}`, at, at + 1],
    },
    {
      name: "upsert",
      text: "INSERT INTO contacts VALUES ($1, $2, $3, $3) ON CONFLICT (account_id, user_id) DO UPDATE SET latest_at = excluded.latest_at",
      values: ["acc", `u${i % 512}`, at],
    },
    { text: "COMMIT" },
  ];
};
const send = async (statements: Statement[]) => {
  const c = await pool.connect();
  try {
    await pipeline(c, statements);
  } finally {
    c.release();
  }
};
const kinds = {
  "two round trips": async () => {
    await send(reads());
    await send(writes());
  },
  "one round trip": async () => {
    const [begin, ...rest] = writes();
    await send([begin!, ...reads(), ...rest]);
  },
};

async function run(unit: () => Promise<void>): Promise<number> {
  let left = N;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await unit();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / N;
}

try {
  for (const unit of Object.values(kinds)) await run(unit); // warm-up
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? Object.entries(kinds) : Object.entries(kinds).reverse();
    for (const [name, unit] of order)
      console.log(`round ${round} ${name}: ${(await run(unit)).toFixed(1)} µs per issue`);
  }
} finally {
  await pool.end();
  await root.query(`DROP DATABASE ${dbName} WITH (FORCE)`);
  await root.end();
}
