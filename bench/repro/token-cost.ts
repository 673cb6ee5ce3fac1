// `node --import tsx bench/repro/token-cost.ts --checkouts <A>,<B> [--rows S5,S4] [--n 2000] [--rounds 2]
// [--connections 4]`: the instructions one token call costs the service (S5 refresh_token, S4 get_access_token,
// as the bench sends them; also S6, send_message with the built-in agent), counted by valgrind's callgrind in each checkout's built server: every thread (the
// event loop and the pool's signatures), from the moment the counters are zeroed after a warm-up to their dump
// once exactly `--n` calls have been answered. A count the machine's load cannot blur, unlike CPU time. Each
// checkout serves its own copy of the bench's 1k dataset (seeded once into this checkout's cache); with `--pg`, its
// own PostgreSQL copy of it (127.0.0.1:5432 or AIAGENT_BENCH_DATABASE_URL; the service's instructions only, not the
// PostgreSQL server's).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "../lib/build.js";
import { callgrindDump, costOptions, costServer } from "../lib/callgrind-dump.js";
import { dataset } from "../lib/dataset.js";
import { benchPostgres, copyToPostgres } from "../lib/postgres.js";
import { cpuMicros, loopCpuMicros } from "../lib/proc.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values: opt } = parseArgs({
  options: {
    // --tool: "callgrind" (instructions, every thread) or "cpu" (the process's and its event loop's CPU time, /proc).
    ...costOptions({ checkouts: ROOT, rows: "S5,S4", n: "2000", warmup: "1500", tool: "callgrind" }),
    pg: { type: "boolean", default: false },
  },
});
const checkouts = String(opt.checkouts)
  .split(",")
  .map((c) => resolve(c));
const rows = String(opt.rows).split(",");
const N = Number(opt.n);
const work = mkdtempSync(join(tmpdir(), "aiagent-token-cost-"));
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
const cacheDir = join(ROOT, "node_modules", ".cache", "aiagent-bench");

const builds: string[] = [];
for (const [i, c] of checkouts.entries())
  builds.push(await buildForBench(c, join(c, "node_modules", ".cache", "aiagent-bench", `cost-${i}-${process.pid}`)));
const data = await dataset({
  root: ROOT,
  buildDir: builds[builds.length - 1]!,
  cacheDir,
  scale: "1k",
  fresh: false,
  log: console.log,
});

const pgAdmin = opt.pg ? await benchPostgres() : undefined;
if (opt.pg && !pgAdmin) throw new Error("--pg: no PostgreSQL answers (set AIAGENT_BENCH_DATABASE_URL)");

const agent = new Agent({ keepAlive: true, maxSockets: Number(opt.connections) });
/** A POST answered 200; sent again once when the server had just closed the idle connection it was sent on. */
async function post(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  try {
    return await postOnce(base, path, body);
  } catch (e) {
    if ((e as { code?: string }).code !== "ECONNRESET") throw e;
    return postOnce(base, path, body);
  }
}

function postOnce(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const text = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = request(
      `${base}${path}`,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const out = JSON.parse(Buffer.concat(chunks).toString()) as { data: Record<string, unknown> };
          if (res.statusCode !== 200) fail(new Error(`${path}: ${res.statusCode} ${JSON.stringify(out)}`));
          else ok(out.data);
        });
      },
    );
    req.on("error", fail);
    req.end(text);
  });
}

/** Sends `calls` (one after another on each of `--connections` lanes), each answered 200. */
async function drive(calls: (() => Promise<unknown>)[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < calls.length) await calls[next++]!();
  };
  await Promise.all(Array.from({ length: Number(opt.connections) }, lane));
}

async function measure(
  build: string,
  name: string,
  row: string,
): Promise<{ instructions?: number; process?: number; loop?: number }> {
  const db = join(work, `${name}.db`);
  for (const s of ["", "-wal", "-shm"]) rmSync(db + s, { force: true });
  // The pristine file and its log, if a reader left one (WAL mode).
  for (const s of ["", "-wal"]) if (existsSync(data.path + s)) copyFileSync(data.path + s, db + s);
  const copy = pgAdmin ? await copyToPostgres(pgAdmin, data, console.log) : undefined;
  try {
    return await measureOn(build, name, row, db, copy?.url);
  } finally {
    await copy?.drop();
  }
}

async function measureOn(
  build: string,
  name: string,
  row: string,
  db: string,
  pgUrl: string | undefined,
): Promise<{ instructions?: number; process?: number; loop?: number }> {
  const out = join(work, `${name}.callgrind`);
  const callgrind = opt.tool === "callgrind";
  const child = costServer({
    build,
    callgrindOut: callgrind ? out : undefined,
    env: { AIAGENT_DB: db, ...(pgUrl ? { AIAGENT_DATABASE_URL: pgUrl } : {}) },
  });
  const url = await new Promise<string>((ok, fail) => {
    let text = "";
    const timer = setTimeout(() => fail(new Error(`no listening line:\n${text.slice(-2000)}`)), 600_000);
    child.stdout.on("data", (d: Buffer) => {
      if (process.env.AIAGENT_COST_STDERR) process.stderr.write(d);
      text += d.toString();
      const m = /"msg":"listening".*?"url":"([^"]+)"/.exec(text);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    });
    child.stderr.on("data", (d: Buffer) => process.env.AIAGENT_COST_STDERR && process.stderr.write(d));
  });
  const seed = data.seed;
  const key = { chatbot_id: seed.chatbot_id, client_api_key: seed.client_api_key };
  const refreshTokens: { user: string; token: string; access: string; conversation: string }[] = [];
  for (const s of seed.samples) {
    const t = await post(url, "/ai_agent/get_access_token", { user_id: s.user_id, ...key });
    refreshTokens.push({
      user: s.user_id,
      token: t.refresh_token as string,
      access: t.access_token as string,
      conversation: s.conversation_id,
    });
  }
  let issued = 0;
  const call =
    row === "S6"
      ? // S6: send_message with the built-in agent, each sample's customer into its own conversation.
        (i: number) => () => {
          const r = refreshTokens[i % refreshTokens.length]!;
          return post(url, `/ai_agent/send_message?access_token=${r.access}`, {
            conversation_id: r.conversation,
            content: "Do you ship to Canada, and how long does it take?",
          });
        }
      : row === "S5"
        ? (i: number) => () => {
            const r = refreshTokens[i % refreshTokens.length]!;
            return post(url, "/ai_agent/refresh_token", {
              user_id: r.user,
              chatbot_id: seed.chatbot_id,
              refresh_token: r.token,
            });
          }
        : // S4: the bench's 256 users, each issued one session per call (a new refresh token row each).
          () => () =>
            post(url, "/ai_agent/get_access_token", { user_id: `ab_${(issued++ % 256).toString(36)}`, ...key });
  await drive(Array.from({ length: Number(opt.warmup) }, (_, i) => call(i)));
  if (!callgrind) {
    const p0 = cpuMicros(child.pid!);
    const l0 = loopCpuMicros(child.pid!);
    await drive(Array.from({ length: N }, (_, i) => call(i)));
    const per = { process: (cpuMicros(child.pid!) - p0) / N, loop: (loopCpuMicros(child.pid!) - l0) / N };
    const closed = new Promise((r) => child.once("close", r));
    child.kill("SIGTERM");
    await closed;
    return per;
  }
  execFileSync("callgrind_control", ["--zero", String(child.pid)]);
  await drive(Array.from({ length: N }, (_, i) => call(i)));
  execFileSync("callgrind_control", ["--dump", String(child.pid)]);
  const closed = new Promise((r) => child.once("close", r));
  child.kill("SIGTERM");
  await closed;
  return { instructions: callgrindDump(work, name, () => undefined).total / N };
}

try {
  for (const row of rows)
    for (let r = 0; r < Number(opt.rounds); r++) {
      // Alternated: A B, then B A.
      const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
      for (const i of order) {
        const per = await measure(builds[i]!, `${row}-${i}-${r}`, row);
        const what =
          per.instructions !== undefined
            ? `${Math.round(per.instructions).toLocaleString("en")} instructions`
            : `${per.process!.toFixed(1)} µs of CPU (event loop ${per.loop!.toFixed(1)} µs)`;
        console.log(`${row} round ${r + 1} ${checkouts[i]}: ${what} per call`);
      }
    }
} finally {
  agent.destroy();
  rmSync(work, { recursive: true, force: true });
  for (const b of builds) rmSync(b, { recursive: true, force: true });
}
