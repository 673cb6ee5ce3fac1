// What one idle frame stream keeps on the service's heap (issue 44, W1), in counts rather than timings: bytes and
// objects per stream, by kind, from two heap snapshots, and the garbage the opening left for the collector.
//
//   node --max-old-space-size=8000 --import tsx bench/stream-heap.ts [--base /path/to/other/checkout] [--streams 2000]
//     [--top 40] [--stats-only] [--bare] [--keep]
//
// Each side (this checkout, and `--base` when given) is built and served on its own copy of a seeded dataset (any
// scale in the bench's cache), with a probe loaded (`--import`, `--expose-gc`). W1's frame streams are opened as
// bench:live opens them (a customer: two access tokens, one conversation, eight streams, `after_message_order=2`):
// a first 64 (so that every path has run once), then the probe, then `--streams` more, then the probe again. The
// probe reads the heap's statistics before and after two full collections (what it drops is the opening's garbage,
// promoted or not), then writes a snapshot; the difference of the two snapshots, divided by `--streams`, is what each
// stream retains, summed by the snapshot's node type and name (a constructor, a closure's function, a string...).
// It also times the first of those collections with every stream open (the CPU of all the server's threads, V8's
// helpers included): a stand-in for the memory reducer's full collection after W1's opening.
// `--bare` measures the bare node:http stream server (bench/servers/bare-stream.ts) the same way; `--stats-only`
// takes no snapshot (for many streams: a snapshot of thousands is gigabytes of JSON to read back).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "./lib/build.js";
import { cachedDataset } from "./lib/dataset.js";
import { postJson } from "./lib/post-json.js";
import { type ServerProcess, servedEnv, startServer } from "./lib/procs.js";
import { openAll, type RawStream } from "./lib/raw-stream.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: opt } = parseArgs({
  options: {
    base: { type: "string" },
    streams: { type: "string", default: "2000" },
    top: { type: "string", default: "40" },
    bare: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    // Without snapshots: only the statistics and the cost of a full collection (for many streams: a snapshot of
    // 17,952 is gigabytes of JSON to read back).
    "stats-only": { type: "boolean", default: false },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const N = Number(opt.streams);
const WARM = 64;
const PER_CUSTOMER = 8;
const dataFile = (() => {
  for (const scale of ["1k", "10k", "100k"]) {
    try {
      return cachedDataset(opt.cache!, scale);
    } catch {
      // Not seeded: the next scale.
    }
  }
  throw new Error("no dataset in the bench's cache: run `npm run bench:live -- --only W4 --scale 1k` once first");
})();
const seed = JSON.parse(readFileSync(dataFile.replace(/\.db$/, ".json"), "utf8")) as {
  chatbot_id: string;
  client_api_key: string;
};
process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
const work = mkdtempSync(join(tmpdir(), "aiagent-stream-heap-"));

const PROBE = `import v8 from "node:v8";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
const dir = process.env.AIAGENT_HEAP_PROBE_DIR;
let n = 0;
const spaces = () => Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));
process.on("SIGUSR2", () => {
  const k = n++;
  const before = { heap: v8.getHeapStatistics(), spaces: spaces() };
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  globalThis.gc();
  const c1 = process.cpuUsage();
  const t1 = process.hrtime.bigint();
  globalThis.gc();
  // The first full collection's CPU, every thread of the process (the main one and V8's helpers), and its wall time.
  const gcCost = { cpuMs: (c1.user + c1.system - c0.user - c0.system) / 1000, wallMs: Number(t1 - t0) / 1e6 };
  const after = { heap: v8.getHeapStatistics(), spaces: spaces(), memory: process.memoryUsage() };
  const smaps = readFileSync("/proc/self/smaps_rollup", "utf8");
  if (process.env.AIAGENT_HEAP_PROBE_SNAPSHOT !== "0") v8.writeHeapSnapshot(dir + "/" + k + ".heapsnapshot");
  // Whole or not at all: the bench reads it as soon as it is there.
  writeFileSync(dir + "/" + k + ".tmp", JSON.stringify({ before, after, smaps, gcCost }));
  renameSync(dir + "/" + k + ".tmp", dir + "/" + k + ".json");
});
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms = 120_000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

interface Probe {
  before: { heap: Record<string, number>; spaces: Record<string, number> };
  after: { heap: Record<string, number>; spaces: Record<string, number>; memory: Record<string, number> };
  smaps: string;
  snapshot: string;
  gcCost: { cpuMs: number; wallMs: number };
}

/** Probes asked of each server so far (its probe numbers its files from 0). */
const probes = new Map<ServerProcess, number>();
async function probe(s: ServerProcess, dir: string): Promise<Probe> {
  const k = probes.get(s) ?? 0;
  probes.set(s, k + 1);
  process.kill(s.pid, "SIGUSR2");
  const file = join(dir, `${k}.json`);
  // Two full collections and a snapshot of a few hundred MB: minutes on a loaded machine.
  await until(
    "the probe's answer",
    () => {
      try {
        readFileSync(file);
        return true;
      } catch {
        return false;
      }
    },
    600_000,
  );
  return { ...JSON.parse(readFileSync(file, "utf8")), snapshot: join(dir, `${k}.heapsnapshot`) };
}

/** The snapshot's live nodes summed by type and name: count and self size. */
function summarise(file: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [ti, ni, si] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")];
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + ti]!]!;
    let name = snap.strings[snap.nodes[i + ni]!]!;
    // Strings and numbers by their type alone; a closure by its function's name; objects by constructor.
    if (type === "string" || type === "concatenated string" || type === "sliced string" || type === "number") name = "";
    else if (name.length > 60) name = `${name.slice(0, 60)}…`;
    const key = `${type} ${name}`;
    const e = out.get(key) ?? { count: 0, bytes: 0 };
    e.count++;
    e.bytes += snap.nodes[i + si]!;
    out.set(key, e);
  }
  return out;
}

interface Side {
  name: string;
  perStream: { bytes: number; objects: number };
  rows: { key: string; count: number; bytes: number }[];
  openingGarbageMb: number;
  openingOldGarbageMb: number;
  rssPerStream: number;
  heapPerStream: number;
  externalPerStream: number;
  nonHeapRssPerStream: number;
  /** A full collection with every stream open: CPU of all the process's threads, and wall time (ms). */
  gcCpuMs: number;
  gcWallMs: number;
  heapUsedMb: number;
}

function smapsKb(text: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
}

async function side(name: string, root: string, bare: boolean): Promise<Side> {
  const build = await buildForBench(
    root,
    join(root, "node_modules", ".cache", "aiagent-bench", `heap-${name}-${process.pid}`),
  );
  const dir = mkdtempSync(join(work, `${name}-`));
  const probeFile = join(dir, "probe.mjs");
  writeFileSync(probeFile, PROBE);
  const saved = process.env.AIAGENT_BENCH_NODE_ARGS;
  process.env.AIAGENT_BENCH_NODE_ARGS = `${saved ?? ""} --expose-gc --import ${pathToFileURL(probeFile).href}`;
  let s: ServerProcess;
  try {
    if (bare) {
      s = await startServer(name, join(build, "bench/servers/bare-stream.js"), ["25000"], {
        ...process.env,
        AIAGENT_HEAP_PROBE_DIR: dir,
        AIAGENT_HEAP_PROBE_SNAPSHOT: !opt["stats-only"] ? "1" : "0",
      });
    } else {
      const db = join(work, `${name}.db`);
      writeFileSync(db, readFileSync(dataFile));
      s = await startServer(
        name,
        join(build, "src/cli/main.js"),
        ["serve"],
        servedEnv({
          AIAGENT_DB: db,
          AIAGENT_ACCESS_TOKEN_TTL: "7200",
          AIAGENT_STREAM_HEARTBEAT_MS: "25000",
          AIAGENT_WATCH_STREAMS: String(N + WARM + 1000),
          AIAGENT_WATCH_FRAME_STREAMS: String(N + WARM + 500),
          AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT: String(N + WARM + 500),
          AIAGENT_WATCH_STREAMS_PER_ADDRESS: String(N + WARM + 1000),
          AIAGENT_HEAP_PROBE_DIR: dir,
          AIAGENT_HEAP_PROBE_SNAPSHOT: !opt["stats-only"] ? "1" : "0",
        }),
        120_000,
      );
    }
  } finally {
    if (saved === undefined) delete process.env.AIAGENT_BENCH_NODE_ARGS;
    else process.env.AIAGENT_BENCH_NODE_ARGS = saved;
  }
  try {
    const port = Number(new URL(s.url).port);
    const paths = async (from: number, count: number): Promise<string[]> => {
      if (bare) return Array.from({ length: count }, (_, i) => `/watch?c=c${Math.floor((from + i) / PER_CUSTOMER)}`);
      const out: string[] = new Array(count);
      const customers = count / PER_CUSTOMER;
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < customers) {
            const c = next++;
            const tok = async () =>
              (
                await postJson(s.url, "/ai_agent/get_access_token", {
                  user_id: `heap-${from / PER_CUSTOMER + c}`,
                  chatbot_id: seed.chatbot_id,
                  client_api_key: seed.client_api_key,
                })
              ).data.access_token as string;
            const [a, b] = [await tok(), await tok()];
            const first = await postJson(s.url, `/ai_agent/send_message?access_token=${a}`, { content: "Hello" });
            for (let k = 0; k < PER_CUSTOMER; k++)
              out[c * PER_CUSTOMER + k] =
                `/watch_conversation?conversation_id=${first.data.conversation_id}&after_message_order=2&access_token=${k < PER_CUSTOMER / 2 ? a : b}`;
          }
        }),
      );
      return out;
    };
    const all: RawStream[] = [];
    const open = async (from: number, count: number) => {
      const ps = await paths(from, count);
      const opened = await openAll(port, ps, 64);
      if (opened.failed) throw new Error(`${name}: ${opened.failed} streams failed: ${opened.firstFailure}`);
      all.push(...opened.streams);
      // Each stream's first line (the service's conversation state, the bare server's) is its first page written.
      await until("every first line", () => all.every((x) => x.lines > 0));
      await sleep(2000);
    };
    await open(0, WARM);
    const p0 = await probe(s, dir);
    await open(WARM, N);
    const p1 = await probe(s, dir);
    if (all.some((x) => x.endedAt)) throw new Error(`${name}: a stream ended`);
    const a = !opt["stats-only"] ? summarise(p0.snapshot) : new Map();
    const b = !opt["stats-only"] ? summarise(p1.snapshot) : new Map();
    const rows: Side["rows"] = [];
    let bytes = 0;
    let objects = 0;
    for (const [key, e] of b) {
      const was = a.get(key) ?? { count: 0, bytes: 0 };
      const row = { key, count: (e.count - was.count) / N, bytes: (e.bytes - was.bytes) / N };
      bytes += row.bytes;
      objects += row.count;
      if (row.count !== 0 || row.bytes !== 0) rows.push(row);
    }
    for (const [key, was] of a) if (!b.has(key)) rows.push({ key, count: -was.count / N, bytes: -was.bytes / N });
    rows.sort((x, y) => Math.abs(y.bytes) - Math.abs(x.bytes));
    const garbage = (p1.before.heap.used_heap_size! - p1.after.heap.used_heap_size!) / 1048576;
    const oldGarbage = (p1.before.spaces.old_space! - p1.after.spaces.old_space!) / 1048576;
    const rss = (smapsKb(p1.smaps, "Rss") - smapsKb(p0.smaps, "Rss")) * 1024;
    const heap = p1.after.memory.heapTotal! - p0.after.memory.heapTotal!;
    const external = p1.after.memory.external! - p0.after.memory.external!;
    const result: Side = {
      name,
      perStream: { bytes, objects },
      rows,
      openingGarbageMb: garbage,
      openingOldGarbageMb: oldGarbage,
      rssPerStream: rss / N,
      heapPerStream: heap / N,
      externalPerStream: external / N,
      nonHeapRssPerStream: (rss - heap) / N,
      gcCpuMs: p1.gcCost.cpuMs,
      gcWallMs: p1.gcCost.wallMs,
      heapUsedMb: p1.after.heap.used_heap_size! / 1048576,
    };
    for (const x of all) x.close();
    return result;
  } finally {
    await s.stop();
    if (opt.keep) console.log(`${name}: snapshots kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
    rmSync(build, { recursive: true, force: true });
  }
}

function print(x: Side) {
  console.log(
    `\n${x.name}: per stream ${Math.round(x.perStream.bytes)} bytes in ${x.perStream.objects.toFixed(1)} objects (snapshot); heap total ${Math.round(x.heapPerStream)} B, RSS ${Math.round(x.rssPerStream)} B (of which outside the heap ${Math.round(x.nonHeapRssPerStream)} B), external ${Math.round(x.externalPerStream)} B; the opening left ${x.openingGarbageMb.toFixed(1)} MB of garbage (${x.openingOldGarbageMb.toFixed(1)} MB of it in old space); a full collection with them open (${x.heapUsedMb.toFixed(0)} MB live): ${x.gcCpuMs.toFixed(0)} ms of CPU, ${x.gcWallMs.toFixed(0)} ms`,
  );
  for (const r of x.rows.slice(0, Number(opt.top)))
    console.log(`  ${r.bytes.toFixed(0).padStart(7)} B ${r.count.toFixed(2).padStart(7)}  ${r.key}`);
}

try {
  console.log(
    `load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}; ${N} streams; dataset ${dataFile}`,
  );
  const sides: Side[] = [];
  if (opt.base) sides.push(await side("A", opt.base, opt.bare!));
  sides.push(await side(opt.base ? "B" : "this", ROOT, opt.bare!));
  for (const x of sides) print(x);
  if (sides.length === 2) {
    const [a, b] = sides as [Side, Side];
    console.log(
      `\nB − A per stream: ${Math.round(b.perStream.bytes - a.perStream.bytes)} bytes, ${(b.perStream.objects - a.perStream.objects).toFixed(1)} objects`,
    );
  }
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  if (!opt.keep) rmSync(work, { recursive: true, force: true });
  process.exit();
}
