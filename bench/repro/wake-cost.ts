// What one request costs at a steady offered rate, per thread: the service's frame read (S1-o) and the bare
// node:http server (B0-o), each driven by the bench's open-loop client, CPU read per thread from /proc.
//
//   node --import tsx bench/repro/wake-cost.ts [--rate 1000] [--seconds 5] [--rounds 3] [--hold]
//
// Prints each row's CPU per request per thread (the main thread is the event loop; "node" threads are V8's helpers:
// concurrent marking, parallel scavenges, optimising compiles) and how often the main thread went to sleep per
// request (voluntary context switches: at a steady 1,000 req/s about one per request, each request its own wake-up).
// Needs the bench's 10k dataset (`npm run bench -- --quick` seeds it once). AIAGENT_BENCH_NODE_ARGS passes node flags
// (--trace-gc, --cpu-prof, --import of a counting module) to both servers.
//
// --hold: start both servers, print their pids, URLs and a file of the S1 request paths, then wait for SIGINT (to
// drive them with bench/lib/open-loop-child.ts and watch them with strace -c -f, perf record -e cpu-clock, etc.).
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "../lib/build.js";
import { cachedDataset } from "../lib/dataset.js";
import { type HttpRequestSpec, runOpenLoop } from "../lib/load.js";
import { type ServerProcess, servedEnv, startServer } from "../lib/procs.js";
import { median } from "../lib/stats.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values: opt } = parseArgs({
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    rows: { type: "string", default: "S1-o,B0-o" },
    hold: { type: "boolean", default: false },
    root: { type: "string", default: ROOT },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const root = resolve(opt.root!);
const seeded = cachedDataset(opt.cache!, "10k");
const meta = JSON.parse(readFileSync(seeded.replace(/\.db$/, ".json"), "utf8")) as {
  chatbot_id: string;
  client_api_key: string;
  samples: { user_id: string; conversation_id: string }[];
};
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";

const work = mkdtempSync(join(tmpdir(), "aiagent-wake-"));
const servers: ServerProcess[] = [];
const build = await buildForBench(root, join(root, "node_modules", ".cache", "aiagent-bench", `wake-${process.pid}`));
const hz = 100;
function threads(pid: number): Map<string, { name: string; ticks: number }> {
  const out = new Map<string, { name: string; ticks: number }>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      out.set(t, { name: t === String(pid) ? "main" : name, ticks: Number(f[11]) + Number(f[12]) });
    } catch {
      // gone
    }
  }
  return out;
}
function voluntary(pid: number): number {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(s)?.[1] ?? 0);
}
try {
  const db = join(work, "service.db");
  copyFileSync(seeded, db);
  const service = await startServer(
    "service",
    join(build, "src/cli/main.js"),
    ["serve"],
    servedEnv({ AIAGENT_DB: db, AIAGENT_ACCESS_TOKEN_TTL: "7200", AIAGENT_ID_TOKEN_TTL: "7200" }),
    120_000,
  );
  servers.push(service);
  const s1: HttpRequestSpec[] = [];
  for (const s of meta.samples.slice(0, 64)) {
    const res = await fetch(`${service.url}/ai_agent/get_access_token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_id: s.user_id, chatbot_id: meta.chatbot_id, client_api_key: meta.client_api_key }),
    });
    const t = ((await res.json()) as { data: { access_token: string } }).data;
    s1.push({
      method: "GET",
      path: `/get_messages_for_conversation?conversation_id=${s.conversation_id}&access_token=${t.access_token}`,
      headers: {},
    });
  }
  const body = Buffer.from(await (await fetch(service.url + s1[0]!.path)).arrayBuffer());
  const bodyFile = join(work, "body.json");
  writeFileSync(bodyFile, body);
  const bare = await startServer("bare", join(build, "bench/servers/bare.js"), [bodyFile], process.env);
  servers.push(bare);
  const rows: Record<string, { s: ServerProcess; requests: HttpRequestSpec[] }> = {
    "S1-o": { s: service, requests: s1 },
    "B0-o": { s: bare, requests: [{ method: "GET", path: "/", headers: {} }] },
  };
  if (opt.hold) {
    const paths = join(tmpdir(), `aiagent-wake-paths-${process.pid}.json`);
    writeFileSync(paths, JSON.stringify(s1.map((r) => r.path)));
    console.log(`service ${service.pid} ${service.url}; bare ${bare.pid} ${bare.url}; S1 paths in ${paths}`);
    await new Promise((r) => process.once("SIGINT", r));
    rmSync(paths, { force: true });
  } else {
    const open = join(build, "bench/lib/open-loop-child.js");
    const rate = Number(opt.rate);
    const seconds = Number(opt.seconds);
    const names = String(opt.rows).split(",");
    for (const n of names)
      await runOpenLoop(process.execPath, open, rows[n]!.s.url, rows[n]!.requests, {
        connections: 32,
        seconds: 2,
        rate,
      });
    const per: Record<string, number[]> = {};
    for (let round = 1; round <= Number(opt.rounds); round++)
      for (const n of names) {
        const { s, requests } = rows[n]!;
        const before = threads(s.pid);
        const vBefore = voluntary(s.pid);
        const r = await runOpenLoop(process.execPath, open, s.url, requests, { connections: 32, seconds, rate });
        const after = threads(s.pid);
        const v = (voluntary(s.pid) - vBefore) / r.requests;
        const byName = new Map<string, number>();
        let total = 0;
        for (const [t, a] of after) {
          const d = a.ticks - (before.get(t)?.ticks ?? 0);
          total += d;
          byName.set(a.name, (byName.get(a.name) ?? 0) + d);
        }
        const us = (ticks: number) => ((ticks * 1e6) / hz / r.requests).toFixed(1);
        (per[n] ??= []).push((total * 1e6) / hz / r.requests);
        const load = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
        console.log(
          `round ${round} ${n}: ${r.requests} req, ${us(total)} µs CPU/req [${[...byName]
            .filter(([, d]) => d > 0)
            .map(([k, d]) => `${k} ${us(d)}`)
            .join(", ")}], main-thread sleeps/req ${v.toFixed(2)}, load ${load}`,
        );
      }
    for (const n of names) console.log(`${n}: median ${median(per[n]!).toFixed(1)} µs CPU/req`);
  }
} finally {
  for (const s of servers) await s.stop();
  rmSync(work, { recursive: true, force: true });
  rmSync(build, { recursive: true, force: true });
}
