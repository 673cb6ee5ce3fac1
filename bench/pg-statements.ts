// `node --import tsx bench/pg-statements.ts [--trace]`: how many statements (round trips to PostgreSQL) one get_access_token,
// one refresh_token and one send_message cost, counted in the driver on a real server: a number the machine's load cannot blur,
// unlike req/s. With --profile N it also runs N more sends and N more issues (for `node --cpu-prof`), and reports the
// CPU time they cost per request: this process (the service and its client) and the PostgreSQL server's backends
// serving this database (read from /proc, so only for a server on this machine): CPU, unlike req/s, is little
// changed by other work on the machine.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { buildApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { benchPostgres } from "./lib/postgres.js";

/** CPU clock ticks (1/100 s) used so far by each server backend connected to `database`, by pid. */
async function serverTicks(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [
    database,
  ]);
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // Gone meanwhile, or not on this machine.
    }
  }
  return ticks;
}

/**
 * PostgreSQL's own execution time for this database's statements (pg_stat_statements: the executor, the lock waits
 * inside it, and planning), per request: what no driver or protocol change can remove. Undefined when the server
 * does not load the extension. Its functions and view live in the database that creates the extension, so they are
 * reached through a connection to the measured database.
 */
async function executorTime(
  admin: pg.Client,
  databaseUrl: string,
): Promise<{ reset(): Promise<void>; report(requests: number): Promise<string>; close(): Promise<void> } | undefined> {
  const loaded = await admin.query<{ s: string }>("SELECT current_setting('shared_preload_libraries') AS s");
  if (!/\bpg_stat_statements\b/.test(loaded.rows[0]?.s ?? "")) return undefined;
  const db = new pg.Client({ connectionString: databaseUrl });
  // The database is dropped WITH (FORCE) at the end, should this connection still be open then.
  db.on("error", () => undefined);
  await db.connect();
  await db.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const here = "(SELECT oid FROM pg_database WHERE datname = current_database())";
  return {
    reset: async () => {
      await db.query(`SELECT pg_stat_statements_reset(0, ${here}, 0)`);
    },
    report: async (requests) => {
      const { rows } = await db.query<{ query: string; ms: number }>(
        `SELECT query, total_exec_time + total_plan_time AS ms FROM pg_stat_statements WHERE dbid = ${here} AND ` +
          "query NOT LIKE '%pg_stat_statements%' ORDER BY 2 DESC",
      );
      const total = rows.reduce((a, r) => a + r.ms, 0);
      const top = rows
        .slice(0, 4)
        .map((r) => `${Math.round((r.ms * 1000) / requests)} µs ${r.query.replace(/\s+/g, " ").slice(0, 60)}`);
      return `  executing its statements: ${Math.round((total * 1000) / requests)} µs per request; most: ${top.join(" | ")}`;
    },
    close: () => db.end(),
  };
}

const { values: opt } = parseArgs({
  options: { profile: { type: "string", default: "0" }, trace: { type: "boolean", default: false } },
  strict: true,
});

let statements = 0;
/** With --trace, each round trip of one send is printed: its statements' names (a pipeline's in brackets). */
let tracing = false;
const query = pg.Client.prototype.query as (...a: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  statements++;
  if (tracing) console.log(`  ${describe(a[0])}`);
  return query.apply(this, a);
} as typeof pg.Client.prototype.query;

/** A statement's name (else its first words), or a pipeline's statements in brackets. */
function describe(q: unknown): string {
  const one = (s: { name?: string; text?: string } | string) =>
    typeof s === "string" ? s.slice(0, 40) : (s.name ?? s.text?.replace(/\s+/g, " ").slice(0, 40) ?? "?");
  const piped = (q as { statements?: { name?: string; text?: string }[] }).statements;
  return piped ? `[${piped.map(one).join(", ")}]` : one(q as string);
}

const admin = await benchPostgres();
if (!admin) throw new Error("no PostgreSQL server answers (set AIAGENT_BENCH_DATABASE_URL)");
const name = `aiagent_bench_stmts_${randomBytes(4).toString("hex")}`;
const adminClient = new pg.Client({ connectionString: admin });
await adminClient.connect();
await adminClient.query(`CREATE DATABASE ${name}`);
const url = new URL(admin);
url.pathname = `/${name}`;
const dir = mkdtempSync(join(tmpdir(), "aiagent-stmts-"));
try {
  const config = loadConfig({
    ...process.env,
    AIAGENT_DATABASE_URL: url.toString(),
    AIAGENT_DB: join(dir, "unused.db"),
    AIAGENT_PORT: "0",
    AIAGENT_HOST: "127.0.0.1",
    AIAGENT_RATE_LIMIT: "off",
    AIAGENT_SECRETS: "bench-only-key-encryption-secret-0123456789",
    AIAGENT_LOG_LEVEL: "silent",
  });
  const app = await buildApp(config, createLogger("silent"));
  const server = await app.listen();
  const email = "owner@statements.example";
  await app.accounts.createAccount(email, "correct horse battery staple");
  const bot = await app.accounts.createChatbot(email, "bot", ["https://shop.example"], []);
  const key = (await app.accounts.createApiKey(email)).clientApiKey;
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return ((await r.json()) as { data: Record<string, unknown> }).data;
  };
  const issue = (user: string) =>
    post("/ai_agent/get_access_token", { user_id: user, chatbot_id: bot.chatbotId, client_api_key: key });
  const token = (await issue("warm-up")).access_token as string;
  const send = (conversationId?: string, access = token) =>
    post(`/ai_agent/send_message?access_token=${access}`, {
      content: "Do you ship to Canada, and how long does it take?",
      ...(conversationId ? { conversation_id: conversationId } : {}),
    });
  const conv = (await send()).conversation_id as string;
  await send(conv);
  const count = async (what: string, n: number, fn: (i: number) => Promise<unknown>) => {
    const before = statements;
    for (let i = 0; i < n; i++) await fn(i);
    console.log(`${what}: ${((statements - before) / n).toFixed(1)} statements per request`);
  };
  await count("get_access_token, a new user", 20, (i) => issue(`new-${i}`));
  await count("get_access_token, a known user", 20, () => issue("new-0"));
  const issueWith = (user: string, more: Record<string, unknown>) =>
    post("/ai_agent/get_access_token", { user_id: user, chatbot_id: bot.chatbotId, client_api_key: key, ...more });
  await count("get_access_token with a launch code", 20, (i) => issueWith(`launch-${i}`, { launch_code: true }));
  await count("get_access_token with a contact profile, a new user", 20, (i) =>
    issueWith(`profile-${i}`, { contact: { contact_name: "Zoë Ågren", email: `z${i}@example.com` } }),
  );
  await count("get_access_token with a contact profile, the same again", 20, (i) =>
    issueWith(`profile-${i}`, { contact: { contact_name: "Zoë Ågren", email: `z${i}@example.com` } }),
  );
  await count("get_access_token with a contact profile, one field changed", 20, (i) =>
    issueWith(`profile-${i}`, { contact: { phone_number: `+1 555 01${i}` } }),
  );
  const refreshToken = (await issue("refresher")).refresh_token as string;
  await count("refresh_token", 20, () =>
    post("/ai_agent/refresh_token", { user_id: "refresher", chatbot_id: bot.chatbotId, refresh_token: refreshToken }),
  );
  await count("send_message into a conversation (message and reply)", 20, () => send(conv));
  if (opt.trace) {
    console.log("one get_access_token's round trips, a known user (background work included):");
    tracing = true;
    await issue("new-1");
    tracing = false;
    console.log("one send_message's round trips (background work included):");
    tracing = true;
    await send(conv);
    tracing = false;
  }
  const n = Number(opt.profile);
  if (n > 0) {
    const loop = async (fn: (i: number) => Promise<unknown>) => {
      for (let i = 0; i < n; i++) await fn(i);
    };
    // Each worker its own customer and conversation, as the bench's connections have: one shared contact row would
    // measure the wait for its lock (every message updates its contact).
    const workers = await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        const access = (await issue(`worker-${w}`)).access_token as string;
        return { access, conv: (await send(undefined, access)).conversation_id as string };
      }),
    );
    const executor = await executorTime(adminClient, url.toString());
    const measure = async (what: string, fn: () => Promise<unknown>) => {
      await executor?.reset();
      const server = await serverTicks(adminClient, name);
      const own = process.cpuUsage();
      await fn();
      const used = process.cpuUsage(own);
      const after = await serverTicks(adminClient, name);
      let ticks = 0;
      for (const [pid, t] of after) ticks += t - (server.get(pid) ?? 0);
      const requests = 8 * n;
      console.log(
        `${what}: service ${Math.round((used.user + used.system) / requests)} µs CPU per request, PostgreSQL ${Math.round((ticks * 10_000) / requests)} µs (${requests} requests, 8 at a time)`,
      );
      if (executor) console.log(await executor.report(requests));
    };
    if (!executor)
      console.log(
        "(the statements' own execution time needs pg_stat_statements in the server's shared_preload_libraries)",
      );
    await measure("send_message", () => Promise.all(workers.map((x) => loop(() => send(x.conv, x.access)))));
    await measure("get_access_token", () =>
      Promise.all(Array.from({ length: 8 }, (_, w) => loop((i) => issue(`p-${w}-${i}`)))),
    );
    await executor?.close();
  }
  await server.close(1000);
  await app.close();
} finally {
  await adminClient.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminClient.end();
  rmSync(dir, { recursive: true, force: true });
}
