// `node --import tsx bench/repro/read-cost.ts --checkouts <A>,<B> [--rows S1,S3a,S3u] [--tool alloc|callgrind|cpu]
// [--n 3000] [--warmup 5000] [--rounds 2] [--connections 4]`: what one read request costs the service, as the bench
// sends them (S1 the frame's read of its conversation, 20 messages, the access token in the query; S3a/S3u/S3s2/…
// the console's contact list with the ID token as a bearer), in each checkout's built server on its own copy of the
// bench's 10k dataset (`npm run bench -- --quick` seeds it once; `--cache` names the cache):
//
// - `alloc` (the default): the bytes the JavaScript heap allocated per request and the bytes scavenges promoted to the
//   old generation per request, exact (bench/repro/alloc-probe.ts: V8's GC profiler between two forced scavenges),
//   with the collections counted. AIAGENT_COST_PROFILE=<dir> also writes each window's sampling heap profile there
//   (`.heapprofile`, for Chrome's DevTools) and prints its largest allocating functions.
// - `callgrind`: instructions per request under valgrind, every thread, counters zeroed after the warm-up and dumped
//   after exactly `--n` answers (AIAGENT_COST_KEEP=<dir> keeps the dumps, for callgrind_annotate).
// - `cpu`: the process's and its event loop's CPU time per request (/proc), at full speed.
//
// Counts, which the machine's load cannot blur. Requests go one after another on each of `--connections` lanes.
import { execFileSync, type spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "../lib/build.js";
import { callgrindDump, costOptions, costServer } from "../lib/callgrind-dump.js";
import { cachedDataset } from "../lib/dataset.js";
import { runOpenLoop } from "../lib/load.js";
import { cpuMicros, loopCpuMicros } from "../lib/proc.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values: opt } = parseArgs({
  options: {
    ...costOptions({ checkouts: ROOT, rows: "S1,S3a", n: "3000", warmup: "5000", tool: "alloc" }),
    // Set: the measured requests come from the bench's open-loop client at this rate (req/s) for --seconds, as the
    // -o rows send them (each request its own wake-up), instead of --n requests back to back.
    rate: { type: "string" },
    seconds: { type: "string", default: "10" },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const checkouts = String(opt.checkouts)
  .split(",")
  .map((c) => resolve(c));
const rows = String(opt.rows).split(",");
const N = Number(opt.n);
const tool = String(opt.tool);
const work = mkdtempSync(join(tmpdir(), "aiagent-read-cost-"));
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
const seeded = cachedDataset(String(opt.cache), "10k");
const meta = JSON.parse(readFileSync(seeded.replace(/\.db$/, ".json"), "utf8")) as {
  chatbot_id: string;
  client_api_key: string;
  email: string;
  samples: { user_id: string; conversation_id: string }[];
};
/** The bench's list variants (bench/run.ts), by the letters after S3. */
const LISTS: Record<string, string> = {
  a: "",
  u: "&filter=unread",
  l: "&filter=live",
  s2: "&search=ma",
  s6: "&search=garcia",
};

const builds: string[] = [];
for (const [i, c] of checkouts.entries())
  builds.push(await buildForBench(c, join(c, "node_modules", ".cache", "aiagent-bench", `read-${i}-${process.pid}`)));

// The probe is this checkout's (a base checkout may predate it).
const own = checkouts.indexOf(ROOT);
const probeBuild =
  own >= 0
    ? builds[own]!
    : await buildForBench(ROOT, join(ROOT, "node_modules", ".cache", "aiagent-bench", `read-p-${process.pid}`));
if (own < 0) builds.push(probeBuild);
const probe = join(probeBuild, "bench/repro/alloc-probe.js");

const agent = new Agent({ keepAlive: true, maxSockets: Number(opt.connections) });

/** One request answered 200, its body's text; sent again once if the server had just closed the idle connection. */
async function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  try {
    return await sendOnce(base, method, path, headers, body);
  } catch (e) {
    if ((e as { code?: string }).code !== "ECONNRESET") throw e;
    return sendOnce(base, method, path, headers, body);
  }
}

function sendOnce(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<string> {
  return new Promise((ok, fail) => {
    const req = request(`${base}${path}`, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 200) fail(new Error(`${path}: ${res.statusCode} ${text}`));
        else ok(text);
      });
    });
    req.on("error", fail);
    req.end(body);
  });
}

const postJson = async (base: string, path: string, body: unknown) => {
  const text = JSON.stringify(body);
  const headers = { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) };
  return (JSON.parse(await send(base, "POST", path, headers, text)) as { data: Record<string, unknown> }).data;
};

async function drive(calls: (() => Promise<unknown>)[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < calls.length) await calls[next++]!();
  };
  await Promise.all(Array.from({ length: Number(opt.connections) }, lane));
}

/** Waits for a line on the child's output. */
function line(child: ReturnType<typeof spawn>, pattern: RegExp, ms = 600_000): Promise<RegExpExecArray> {
  return new Promise((ok, fail) => {
    let text = "";
    const timer = setTimeout(() => fail(new Error(`no ${pattern} in:\n${text.slice(-2000)}`)), ms);
    const on = (d: Buffer) => {
      if (process.env.AIAGENT_COST_STDERR) process.stderr.write(d);
      text += d.toString();
      const m = pattern.exec(text);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off("data", on);
        ok(m);
      }
    };
    child.stdout!.on("data", on);
    child.once("exit", (code) =>
      fail(new Error(`the server ended (${code}) before ${pattern}:\n${text.slice(-2000)}`)),
    );
  });
}

async function measure(build: string, name: string, row: string): Promise<string> {
  const db = join(work, `${name}.db`);
  for (const s of ["", "-wal", "-shm"]) rmSync(db + s, { force: true });
  copyFileSync(seeded, db);
  const callgrindOut = join(work, `${name}.callgrind`);
  const allocOut = join(work, `${name}.alloc.json`);
  const profileDir = process.env.AIAGENT_COST_PROFILE;
  const profileOut = profileDir ? join(profileDir, `${name}.heapprofile`) : undefined;
  const callgrind = tool === "callgrind";
  const child = costServer({
    build,
    callgrindOut: callgrind ? callgrindOut : undefined,
    nodeFlags: tool === "cpu" ? [] : ["--expose-gc", "--import", probe],
    env: {
      AIAGENT_DB: db,
      AIAGENT_ACCESS_TOKEN_TTL: "7200",
      AIAGENT_ID_TOKEN_TTL: "7200",
      AIAGENT_ALLOC_OUT: allocOut,
      ...(callgrind ? { AIAGENT_PROBE_GC_ONLY: "1" } : {}),
      ...(profileOut ? { AIAGENT_ALLOC_PROFILE: profileOut } : {}),
    },
  });
  child.stderr!.on("data", (d: Buffer) => process.env.AIAGENT_COST_STDERR && process.stderr.write(d));
  const url = (await line(child, /"msg":"listening".*?"url":"([^"]+)"/))[1]!;
  const key = { chatbot_id: meta.chatbot_id, client_api_key: meta.client_api_key };
  let paths: { path: string; headers: Record<string, string> }[];
  if (row === "S1") {
    paths = [];
    for (const s of meta.samples.slice(0, 64)) {
      const t = await postJson(url, "/ai_agent/get_access_token", { user_id: s.user_id, ...key });
      paths.push({
        path: `/get_messages_for_conversation?conversation_id=${s.conversation_id}&access_token=${t.access_token}`,
        headers: {},
      });
    }
  } else {
    const q = LISTS[row.slice(2)];
    if (q === undefined) throw new Error(`unknown row ${row}`);
    const id = await postJson(url, "/get_id_token", { user_email_id: meta.email, client_api_key: meta.client_api_key });
    const authorization = `Bearer ${(id.idToken ?? id.id_token) as string}`;
    paths = [
      {
        path: `/get_contact_conversations?user_email_id=${encodeURIComponent(meta.email)}${q}`,
        headers: { authorization },
      },
    ];
  }
  const call = (i: number) => () => {
    const p = paths[i % paths.length]!;
    return send(url, "GET", p.path, p.headers);
  };
  await drive(Array.from({ length: Number(opt.warmup) }, (_, i) => call(i)));
  /** The measured requests; how many were answered. */
  const measured = async (): Promise<number> => {
    if (!opt.rate) {
      await drive(Array.from({ length: N }, (_, i) => call(i)));
      return N;
    }
    const r = await runOpenLoop(
      process.execPath,
      join(build, "bench/lib/open-loop-child.js"),
      url,
      paths.map((p) => ({ method: "GET", path: p.path, headers: p.headers })),
      { connections: 32, seconds: Number(opt.seconds), rate: Number(opt.rate) },
    );
    if (r.errors) throw new Error(`${r.errors} errors`);
    return r.requests;
  };
  const stop = async () => {
    const closed = new Promise((r) => child.once("close", r));
    child.kill("SIGTERM");
    await closed;
  };
  if (tool === "cpu") {
    const p0 = cpuMicros(child.pid!);
    const l0 = loopCpuMicros(child.pid!);
    const n = await measured();
    const p = (cpuMicros(child.pid!) - p0) / n;
    const l = (loopCpuMicros(child.pid!) - l0) / n;
    await stop();
    return `${p.toFixed(1)} µs of CPU (event loop ${l.toFixed(1)} µs) per request`;
  }
  if (tool === "alloc") {
    const opened = line(child, /ALLOC-PROBE open/);
    child.kill("SIGUSR2");
    await opened;
    const n = await measured();
    const closed = line(child, /ALLOC-PROBE closed/);
    child.kill("SIGUSR2");
    await closed;
    await stop();
    const r = JSON.parse(readFileSync(allocOut, "utf8")) as {
      allocated: number;
      promoted: number;
      counts: Record<string, number>;
    };
    let top = "";
    if (profileOut) top = `\n${topFunctions(profileOut, n)}`;
    return (
      `${(r.allocated / n).toFixed(0)} bytes allocated, ${(r.promoted / n).toFixed(0)} promoted per request ` +
      `(${Object.entries(r.counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(", ")}; ${n} requests)${top}`
    );
  }
  // AIAGENT_COST_FULL_GC: a full collection first (the probe's). Tried so that none would fall in the counted
  // window; it made the window worse (the sweeping it leaves, and code flushed and compiled again): off by default.
  if (process.env.AIAGENT_COST_FULL_GC) {
    const collected = line(child, /ALLOC-PROBE collected/);
    child.kill("SIGUSR2");
    await collected;
  }
  execFileSync("callgrind_control", ["--zero", String(child.pid)]);
  await drive(Array.from({ length: N }, (_, i) => call(i)));
  execFileSync("callgrind_control", ["--dump", String(child.pid)]);
  await stop();
  const { total, of: helpers } = callgrindDump(work, name, threadsShare);
  const per = (n: number) => Math.round(n / N).toLocaleString("en");
  return `${per(total)} instructions per request (event loop ${per(total - helpers)}, other threads ${per(helpers)})`;
}

/** The instructions spent under the threads' entry point (start_thread: every thread but the main one). */
function threadsShare(file: string): number {
  const out = execFileSync("callgrind_annotate", ["--inclusive=yes", "--threshold=100", file], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const m = /^\s*([\d,]+)\s.*:start_thread\b/m.exec(out);
  return m ? Number(m[1]!.replaceAll(",", "")) : 0;
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** The sampling profile's largest allocators by function (self bytes per request). */
function topFunctions(file: string, n: number): string {
  const { head } = JSON.parse(readFileSync(file, "utf8")) as { head: ProfileNode };
  const by = new Map<string, number>();
  const walk = (node: ProfileNode) => {
    const f = node.callFrame;
    const k = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/aiagent-bench\/[^/]+\//, "")}:${f.lineNumber + 1}`;
    by.set(k, (by.get(k) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c);
  };
  walk(head);
  return [...by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, v]) => `    ${(v / n).toFixed(0).padStart(6)} B  ${k}`)
    .join("\n");
}

try {
  for (const row of rows)
    for (let r = 0; r < Number(opt.rounds); r++) {
      // Alternated: A B, then B A.
      const order = r % 2 === 0 ? checkouts.map((_, i) => i) : checkouts.map((_, i) => checkouts.length - 1 - i);
      for (const i of order)
        console.log(`${row} round ${r + 1} ${checkouts[i]}: ${await measure(builds[i]!, `${row}-${i}-${r}`, row)}`);
    }
} finally {
  agent.destroy();
  rmSync(work, { recursive: true, force: true });
  for (const b of builds) rmSync(b, { recursive: true, force: true });
}
