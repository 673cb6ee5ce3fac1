// What a served instance spends while nobody calls it: its CPU per second of idle time, next to the bare node:http
// server's. At the `-o` rows' 1,000 req/s offered, every millisecond of CPU per second of background work (pollers,
// sweeps, timers) is a microsecond of CPU per request that the row charges to the request.
//
//   node --import tsx bench/idle-cost.ts [--seconds 20] [--rounds 3]
//
// Needs the bench's 10k dataset (`npm run bench -- --quick` seeds it once). Both servers are started as the bench
// starts them, asked one request each (so both have served), then left alone while their CPU is read from /proc.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "./lib/build.js";
import { cachedDataset } from "./lib/dataset.js";
import { cpuMicros } from "./lib/proc.js";
import { type ServerProcess, servedEnv, startServer } from "./lib/procs.js";
import { median } from "./lib/stats.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({
  options: {
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const seconds = Number(opt.seconds);
const seeded = cachedDataset(opt.cache!, "10k");
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";

const work = mkdtempSync(join(tmpdir(), "aiagent-idle-"));
const servers: ServerProcess[] = [];
const build = await buildForBench(ROOT, join(ROOT, "node_modules", ".cache", "aiagent-bench", `idle-${process.pid}`));
try {
  const db = join(work, "service.db");
  copyFileSync(seeded, db);
  const body = join(work, "body.json");
  writeFileSync(body, JSON.stringify({ data: { messages: [] } }));
  const service = await startServer(
    "service",
    join(build, "src/cli/main.js"),
    ["serve"],
    servedEnv({ AIAGENT_DB: db }),
  );
  const bare = await startServer("bare", join(build, "bench/servers/bare.js"), [body], process.env);
  servers.push(service, bare);
  for (const s of servers) await (await fetch(`${s.url}/healthz`)).arrayBuffer();
  // Let start-up work (the first checkpoint, the first sweeps) finish before anything is counted.
  await sleep(5000);
  const per: Record<string, number[]> = { service: [], bare: [] };
  for (let round = 1; round <= Number(opt.rounds); round++) {
    const before = servers.map((s) => cpuMicros(s.pid));
    const threadsBefore = threadTicks(service.pid);
    await sleep(seconds * 1000);
    const threadsAfter = threadTicks(service.pid);
    const busy = [...threadsAfter]
      .map(([t, v]) => [t, v.ticks - (threadsBefore.get(t)?.ticks ?? 0), v.name] as const)
      .filter(([, d]) => d > 0)
      .map(([t, d, n]) => `${n}(${t}) ${((d * 10) / seconds).toFixed(1)}`);
    console.log(`round ${round} service threads, ms/s: ${busy.join(", ") || "none"}`);
    servers.forEach((s, i) => {
      const msPerS = (cpuMicros(s.pid) - before[i]!) / 1000 / seconds;
      per[s.name]!.push(msPerS);
      console.log(`round ${round} ${s.name}: ${msPerS.toFixed(2)} ms of CPU per second idle`);
    });
  }
  for (const [n, xs] of Object.entries(per))
    console.log(
      `${n}: median ${median(xs).toFixed(2)} ms/s, i.e. ${median(xs).toFixed(2)} µs per request at 1,000 req/s`,
    );
} finally {
  for (const s of servers) await s.stop();
  rmSync(work, { recursive: true, force: true });
  rmSync(build, { recursive: true, force: true });
}

/** Each thread's user + system clock ticks (USER_HZ, 100 a second) and name. */
function threadTicks(pid: number): Map<string, { ticks: number; name: string }> {
  const out = new Map<string, { ticks: number; name: string }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, { ticks: Number(f[11]) + Number(f[12]), name });
    } catch {
      // The thread ended.
    }
  }
  return out;
}
