import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { buildForBench } from "./lib/build.js";
import { type Dataset, dataset, workingCopy } from "./lib/dataset.js";
import { backendCpu, backendCpuBetween, benchPostgres, copyToPostgres, type PgDataset } from "./lib/postgres.js";
import { cpuMicros } from "./lib/proc.js";
import { type ServerProcess, servedEnv, startServer } from "./lib/procs.js";
import { openAll, type RawStream } from "./lib/raw-stream.js";
import { runBounds } from "./lib/run-bounds.js";

// `npm run bench:live`: the live rows of issue 44 on one instance (SQLite), the load generator in this process on
// loopback with one raw HTTP/1.1 connection per stream (bench/lib/raw-stream.ts), and every row measured against a
// bare node:http server holding the same streams (bench/servers/bare-stream.ts) in the same run:
//   W1  N open frame streams, idle, heartbeats on: RSS and idle CPU
//   W2  W1 plus writes through the API to the watched conversations: write's answer → delivery, missed, duplicated
//   W3  1,000 of W1's streams revoked at once: revocation's answer → stream's end; the others keep receiving
//   W4  a stream resumed 100,000 events behind: events/s, RSS growth, time to headers
//   W5  W2 on PostgreSQL: two instances on one database, half of the streams on each, the writes through both
//       (skipped, and said so, when no PostgreSQL answers: AIAGENT_BENCH_DATABASE_URL, or one on 127.0.0.1:5432)
// Bounded: every phase has a time limit, and the whole run a watchdog.

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");

const { values: opt } = parseArgs({
  options: {
    streams: { type: "string", default: "20000" },
    // Events per second offered in W2 (a frame's send_message writes two: the message and the agent's reply).
    rate: { type: "string", default: "1000" },
    "w2-seconds": { type: "string", default: "10" },
    "idle-seconds": { type: "string", default: "30" },
    "heartbeat-ms": { type: "string", default: "25000" },
    revoke: { type: "string", default: "1000" },
    // The dataset of W4's long conversation: 100k (100,020 messages), 10k (10,020) or 1k (2,020).
    scale: { type: "string", default: "100k" },
    only: { type: "string" },
    out: { type: "string" },
  },
  strict: true,
});

const STREAMS_PER_CUSTOMER = 8; // two tokens, four streams each: the default caps per customer and per token
const wanted = Number(opt.streams);
const rate = Number(opt.rate);
const w2Seconds = Number(opt["w2-seconds"]);
const idleSeconds = Number(opt["idle-seconds"]);
const heartbeatMs = Number(opt["heartbeat-ms"]);
const only = new Set((opt.only ?? "W1,W2,W3,W4,W5").split(",").map((s) => s.trim().toUpperCase()));
const outDir = resolve(opt.out ?? join(ROOT, "bench", "results"));
const cacheDir = join(ROOT, "node_modules", ".cache", "aiagent-bench");
const WATCHDOG_MS = 30 * 60_000;

const { log, servers } = runBounds("bench:live", WATCHDOG_MS);

/** The file-descriptor limit of this process (and so of the servers it starts), raised where allowed. */
function raiseFdLimit(want: number): number {
  const soft = () => Number(/Max open files\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? 1024);
  if (soft() >= want) return soft();
  try {
    // Node cannot call setrlimit; prlimit(1) can raise this process's limit when allowed (root, or under the hard
    // limit). Otherwise: `ulimit -n 65536` in the shell before `npm run bench:live`.
    execFileSync("prlimit", ["--pid", String(process.pid), `--nofile=${want}:${want}`], { stdio: "ignore" });
  } catch {
    // Not allowed: the stream count is clamped to what the limit allows.
  }
  return soft();
}

const agent = new Agent({ keepAlive: true, maxSockets: 128 });

/** A JSON request on a kept-alive connection; resolves with the status, the parsed body and when it answered. */
function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; at: number }> {
  const u = new URL(base);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path,
        agent,
        timeout: 30_000,
        headers: { ...(data ? { "content-type": "application/json" } : {}), ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          text += d;
        });
        res.on("end", () => {
          const at = performance.now();
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          done({ status: res.statusCode ?? 0, body: parsed, at });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${path}: no answer within 30 s`)));
    req.on("error", fail);
    req.end(data);
  });
}

async function ok(p: Promise<{ status: number; body: any; at: number }>, what: string) {
  const r = await p;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r;
}

/** Runs `f` on 0..n-1, `width` at a time. */
async function pool(n: number, width: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await f(next++);
    }),
  );
}

const rss = (pid: number) =>
  Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const mb = (b: number) => Math.round(b / 1048576);
const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const until = async (what: string, okNow: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!okNow()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  void what;
  return true;
};

/** What a target (the service, or the bare baseline) must offer the rows. */
interface Target {
  name: string;
  server: ServerProcess;
  /** Every instance the rows' writes and streams reach (W5: two); `server` alone when not given. */
  instances?: ServerProcess[];
  port: number;
  /** Paths of the streams, and which conversation and customer each watches (and on which port, when not `port`). */
  streams: { path: string; conv: string; customer: number; port?: number }[];
  /** A write to conversation `conv`: resolves with the message ids it made and when it answered. */
  write(conv: string, n: number): Promise<{ ids: string[]; at: number }>;
  /** Ends customer `c`'s streams (a revocation); resolves when answered. */
  revoke(c: number): Promise<number>;
  /** The path of a stream `backlog` events behind. */
  backlogPath: string;
  backlog: number;
}

interface Rows {
  /** The server's peak RSS over the whole run (VmHWM), MB. */
  peakRssMb?: number;
  /** W5's two PostgreSQL instances' peak RSS, MB. */
  peakRssMbPg?: number[];
  /** Why W5 did not run (no PostgreSQL). */
  W5Skipped?: string;
  W1?: {
    /** Streams open through the idle window, of those asked; the failures to open, and the first one. */
    streams: number;
    rssMb: number;
    cpuPct: number;
    beatsPerSec: number;
    openSeconds: number;
    asked: number;
    failed: number;
    firstFailure: string;
    /** Request → headers while opening them all, 64 at a time. */
    openP50Ms: number;
    openP99Ms: number;
  };
  W2?: {
    offeredEventsPerSec: number;
    eventsPerSec: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    deliveries: number;
    missed: number;
    duplicated: number;
    /** Writes not sent (256 already in flight) or answered with an error, and the first error. */
    failedWrites: number;
    firstError: string;
    /** The service's CPU (every instance's) from the first write to the last delivery, per event written, ms. */
    cpuMsPerEvent: number;
    /** This process's CPU over the same window, % of one core: the load generator is not the limit while low. */
    generatorCpuPct: number;
  };
  W3?: {
    revoked: number;
    ended: number;
    p99Ms: number;
    maxMs: number;
    othersExpected: number;
    othersGot: number;
    /** Revocation calls that failed (no answer within 30 s), and the first error. */
    failedRevocations: number;
    revokeError: string;
  };
  W4?: { events: number; eventsPerSec: number; headersMs: number; rssGrowthMb: number };
  /** W2 across two PostgreSQL instances: the streams open on each, and W2's figures. */
  W5?: NonNullable<Rows["W2"]> & {
    instances: number;
    streamsPerInstance: number[];
    postgres: string;
    /** The CPU of the PostgreSQL backends serving the instances per event written, ms (a server on this machine). */
    pgCpuMsPerEvent: number;
  };
}

async function w4(t: Target): Promise<Rows["W4"]> {
  const before = rss(t.server.pid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss(t.server.pid));
  }, 20);
  let events = 0;
  let lastAt = 0;
  const asked = performance.now();
  const opened = await openAll(t.port, [t.backlogPath], 1, (_s, line, at) => {
    if (line.includes('"message":')) {
      events++;
      lastAt = at;
    }
  });
  if (opened.failed) throw new Error(`${t.name} W4: ${opened.firstFailure}`);
  const s = opened.streams[0];
  const headersMs = s!.headersAt - asked;
  const done = await until("the backlog read", () => events >= t.backlog, 300_000);
  clearInterval(sampler);
  peak = Math.max(peak, rss(t.server.pid));
  s!.close();
  if (!done) log(`${t.name} W4: only ${events} of ${t.backlog} events within 300 s`);
  return {
    events,
    eventsPerSec: Math.round(events / ((lastAt - s!.headersAt) / 1000)),
    headersMs: Math.round(headersMs * 10) / 10,
    rssGrowthMb: mb(peak - before),
  };
}

/** W1–W3 on `t`; with `asW5`, only W2's writes and deliveries, recorded as W5 (the streams spread over instances). */
async function liveRows(t: Target, rows: Rows, asW5?: { postgres: string; url: string }): Promise<void> {
  // Deliveries: per stream, the message ids seen and when.
  const seen = new Map<RawStream, Map<string, number>>();
  let dupes = 0;
  const onLine = (s: RawStream, line: string, at: number) => {
    const m = /"message_id":"([^"]+)"/.exec(line);
    if (!m) return;
    let got = seen.get(s);
    if (!got) seen.set(s, (got = new Map()));
    if (got.has(m[1]!)) dupes++;
    else got.set(m[1]!, at);
  };
  const t0 = performance.now();
  const opened = await openAll(
    (i) => t.streams[i]!.port ?? t.port,
    t.streams.map((x) => x.path),
    64,
    onLine,
  );
  const streams = opened.streams;
  const openSeconds = (performance.now() - t0) / 1000;
  log(
    `${t.name}: ${streams.length - opened.failed} of ${streams.length} streams open in ${openSeconds.toFixed(1)} s${opened.failed ? `; ${opened.failed} failed, first: ${opened.firstFailure.slice(0, 300)}` : ""}`,
  );
  try {
    // W1: idle, heartbeats on. A stream counts as open at its headers; the service then still sends each one its
    // first page, and with thousands opened 64 at a time that tail lasts seconds after the last headers (the opening's
    // work, not idleness). The idle window starts once a whole second of the service used under 10% of a core (twice
    // W1's target, so a steady cost above the target is still measured as it is), at the latest 30 s on.
    const settled = await settle(t.server.pid, 30_000);
    log(
      `${t.name}: settled ${(settled.ms / 1000).toFixed(1)} s after the last stream opened${settled.quiet ? "" : " (not quiet within 30 s)"}`,
    );
    if (!asW5 && only.has("W1")) {
      const cpu0 = cpuMicros(t.server.pid);
      const beats0 = streams.reduce((n, s) => n + s.beats, 0);
      const w0 = performance.now();
      await new Promise((r) => setTimeout(r, idleSeconds * 1000));
      const idleS = (performance.now() - w0) / 1000;
      rows.W1 = {
        streams: streams.filter((s) => !s.endedAt).length,
        rssMb: mb(rss(t.server.pid)),
        cpuPct: Math.round(((cpuMicros(t.server.pid) - cpu0) / 1e6 / idleS) * 1000) / 10,
        beatsPerSec: Math.round((streams.reduce((n, s) => n + s.beats, 0) - beats0) / idleS),
        openSeconds: Math.round(openSeconds * 10) / 10,
        asked: streams.length,
        failed: opened.failed,
        firstFailure: opened.firstFailure.slice(0, 300),
        openP50Ms: Math.round(quantile(opened.headerMs, 0.5)),
        openP99Ms: Math.round(quantile(opened.headerMs, 0.99)),
      };
      log(`${t.name} W1: ${JSON.stringify(rows.W1)}`);
    }

    const byConv = new Map<string, RawStream[]>();
    t.streams.forEach((x, i) => {
      // Only the streams that opened (and are still open) are expected to receive.
      if (streams[i]!.status !== 200 || streams[i]!.endedAt) return;
      const list = byConv.get(x.conv) ?? [];
      list.push(streams[i]!);
      byConv.set(x.conv, list);
    });
    const convs = [...byConv.keys()];
    // The customers W3 revokes: the first ones; W2 writes to the others' conversations (still open after W3).
    const customers = new Set(t.streams.map((x) => x.customer));
    // At most half of them, so that there are others to keep receiving.
    const revokedCount = Math.min(Math.ceil(Number(opt.revoke) / STREAMS_PER_CUSTOMER), Math.floor(customers.size / 2));
    const revoked = new Set([...customers].slice(0, revokedCount));

    if (asW5 || only.has("W2")) {
      const perWrite = 2;
      const writesPerSec = rate / perWrite;
      const written: { conv: string; ids: string[]; at: number }[] = [];
      let failed = 0;
      let firstError = "";
      let inFlight = 0;
      const pids = (t.instances ?? [t.server]).map((x) => x.pid);
      const serviceCpu = () => pids.reduce((n, pid) => n + cpuMicros(pid), 0);
      const pg0 = asW5 ? await backendCpu(asW5.url) : undefined;
      const cpu0 = serviceCpu();
      const ownCpu0 = process.cpuUsage();
      const w2Start = performance.now();
      const total = Math.round(writesPerSec * w2Seconds);
      const pending: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const due = w2Start + (i * 1000) / writesPerSec;
        // Always yield, even when behind: the answers of the writes in flight must be read meanwhile.
        const wait = due - performance.now();
        // (setImmediate when behind: a timer's granularity on a busy machine would pace the writes below the rate).
        await new Promise((r) => (wait > 1 ? setTimeout(r, wait) : setImmediate(r)));
        // Open loop with a bound: a service that falls behind is not buried under requests.
        if (inFlight >= 256) {
          failed++;
          firstError ||= "256 writes in flight: not sent";
          continue;
        }
        const conv = convs[i % convs.length]!;
        inFlight++;
        pending.push(
          t
            .write(conv, perWrite)
            .then((r) => void written.push({ conv, ...r }))
            .catch((e: Error) => {
              failed++;
              firstError ||= e.message.slice(0, 200);
            })
            .finally(() => void inFlight--),
        );
      }
      await Promise.all(pending);
      const w2End = performance.now();
      // Give the last deliveries up to 5 s.
      const expected = () =>
        written.every((w) => byConv.get(w.conv)!.every((s) => w.ids.every((id) => seen.get(s)?.has(id))));
      await until("the last deliveries", expected, 5000);
      const cpuMs = (serviceCpu() - cpu0) / 1000;
      const own = process.cpuUsage(ownCpu0);
      const pgCpuMs = pg0 && asW5 ? backendCpuBetween(pg0, await backendCpu(asW5.url)) / 1000 : 0;
      const windowS = (performance.now() - w2Start) / 1000;
      const lat: number[] = [];
      let missed = 0;
      for (const w of written)
        for (const s of byConv.get(w.conv)!)
          for (const id of w.ids) {
            const at = seen.get(s)?.get(id);
            if (at === undefined) missed++;
            else lat.push(Math.max(0, at - w.at));
          }
      const w2: NonNullable<Rows["W2"]> = {
        offeredEventsPerSec: rate,
        eventsPerSec: Math.round((written.length * perWrite) / ((w2End - w2Start) / 1000)),
        p50Ms: Math.round(quantile(lat, 0.5) * 10) / 10,
        p99Ms: Math.round(quantile(lat, 0.99) * 10) / 10,
        maxMs: Math.round(quantile(lat, 1) * 10) / 10,
        deliveries: lat.length,
        missed,
        duplicated: dupes,
        failedWrites: failed,
        firstError,
        cpuMsPerEvent: Math.round((cpuMs / Math.max(1, written.length * perWrite)) * 100) / 100,
        generatorCpuPct: Math.round(((own.user + own.system) / 1e4 / windowS) * 10) / 10,
      };
      if (asW5) {
        const ports = [...new Set(t.streams.map((x) => x.port ?? t.port))];
        rows.W5 = {
          ...w2,
          pgCpuMsPerEvent: Math.round((pgCpuMs / Math.max(1, written.length * perWrite)) * 100) / 100,
          instances: ports.length,
          streamsPerInstance: ports.map(
            (p) => t.streams.filter((x, i) => (x.port ?? t.port) === p && streams[i]!.status === 200).length,
          ),
          postgres: asW5.postgres,
        };
      } else rows.W2 = w2;
      log(`${t.name} ${asW5 ? "W5" : "W2"}: ${JSON.stringify(asW5 ? rows.W5 : rows.W2)}`);
    }

    if (!asW5 && only.has("W3")) {
      const ends = new Map<number, number>();
      const victims = t.streams
        .map((x, i) => ({ ...x, s: streams[i]! }))
        .filter((x) => revoked.has(x.customer) && x.s.status === 200 && !x.s.endedAt);
      let failedRevocations = 0;
      let revokeError = "";
      await Promise.all(
        [...revoked].map(async (c) => {
          try {
            ends.set(c, await t.revoke(c));
          } catch (e) {
            failedRevocations++;
            revokeError ||= (e as Error).message.slice(0, 200);
          }
        }),
      );
      await until("the revoked streams' end", () => victims.every((v) => v.s.endedAt > 0), 10_000);
      const delays = victims
        .filter((v) => v.s.endedAt > 0 && ends.has(v.customer))
        .map((v) => Math.max(0, v.s.endedAt - ends.get(v.customer)!));
      // The others keep receiving: one write to each of up to 50 conversations not revoked.
      const kept = convs.filter((c) => byConv.get(c)!.every((s) => !s.endedAt)).slice(0, 50);
      const writes = (
        await Promise.all(
          kept.map((c) =>
            t.write(c, 1).then(
              (w) => ({ c, ...w }),
              () => undefined,
            ),
          ),
        )
      ).filter((w) => w !== undefined);
      const got = () =>
        writes.reduce(
          (n, w) => n + byConv.get(w.c)!.filter((s) => w.ids.every((id) => seen.get(s)?.has(id))).length,
          0,
        );
      const othersExpected = writes.reduce((n, w) => n + byConv.get(w.c)!.length, 0);
      await until("the others' deliveries", () => got() === othersExpected, 5000);
      rows.W3 = {
        revoked: victims.length,
        ended: delays.length,
        p99Ms: Math.round(quantile(delays, 0.99)),
        maxMs: Math.round(quantile(delays, 1)),
        othersExpected,
        othersGot: got(),
        failedRevocations,
        revokeError,
      };
      log(`${t.name} W3: ${JSON.stringify(rows.W3)}`);
    }
  } finally {
    for (const s of streams) s.close();
  }
}

async function main(): Promise<void> {
  const fdLimit = raiseFdLimit(2 * wanted + 4096);
  // This process holds one socket per stream, and so does the server: keep a margin for files and requests.
  const n = Math.max(
    STREAMS_PER_CUSTOMER,
    Math.floor(Math.min(wanted, fdLimit - 2048) / STREAMS_PER_CUSTOMER) * STREAMS_PER_CUSTOMER,
  );
  if (n < wanted) log(`file-descriptor limit ${fdLimit}: ${n} streams instead of ${wanted} (ulimit -n 65536 first)`);
  const loadBefore = loadavg();
  const buildDir = await buildForBench(ROOT, join(cacheDir, `build-live-${process.pid}`));
  const main = join(buildDir, "src/cli/main.js");
  process.env.AIAGENT_SECRETS ??= "bench-only-key-encryption-secret-0123456789";
  const d = await dataset({ root: ROOT, buildDir, cacheDir, scale: opt.scale!, fresh: false, log });
  const work = mkdtempSync(join(tmpdir(), "aiagent-bench-live-"));
  const customers = n / STREAMS_PER_CUSTOMER;
  const results: Record<string, Rows> = { service: {}, bare: {} };
  let pgData: PgDataset | undefined;
  try {
    // The baseline first: the same streams, rows and load against bare node:http.
    const bare = await startServer(
      "bare node:http streams",
      join(buildDir, "bench/servers/bare-stream.js"),
      [String(heartbeatMs)],
      process.env,
    );
    servers.push(bare);
    let ids = 0;
    const bareTarget: Target = {
      name: "bare",
      server: bare,
      port: Number(new URL(bare.url).port),
      streams: Array.from({ length: n }, (_, i) => {
        const customer = Math.floor(i / STREAMS_PER_CUSTOMER);
        return { path: `/watch?c=c${customer}`, conv: `c${customer}`, customer };
      }),
      write: async (conv, k) => {
        const fresh = Array.from({ length: k }, () => `b-${ids++}`);
        const r = await ok(call(bare.url, "POST", `/publish?c=${conv}&ids=${fresh.join(",")}`), "publish");
        return { ids: fresh, at: r.at };
      },
      revoke: async (c) => (await ok(call(bare.url, "POST", `/end?c=c${c}`), "end")).at,
      backlogPath: `/backlog?n=${d.seed.long!.messages}`,
      backlog: d.seed.long!.messages,
    };
    if (only.has("W4")) results.bare!.W4 = await w4(bareTarget);
    log(`bare W4: ${JSON.stringify(results.bare!.W4)}`);
    // W2 and W3 run on W1's streams: any of the three opens them (W1's idle window only when asked for).
    const streamRows = only.has("W1") || only.has("W2") || only.has("W3");
    if (streamRows) await liveRows(bareTarget, results.bare!);
    results.bare!.peakRssMb = mb(await bare.stop());

    const serviceEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
      servedEnv({
        AIAGENT_ACCESS_TOKEN_TTL: "7200",
        AIAGENT_ID_TOKEN_TTL: "7200",
        AIAGENT_STREAM_HEARTBEAT_MS: String(heartbeatMs),
        // Every stream comes from 127.0.0.1 and from one account: the per-address and per-account shares are the
        // instance's here (the per-customer and per-token caps stay the defaults).
        AIAGENT_WATCH_STREAMS: String(n + 1000),
        AIAGENT_WATCH_FRAME_STREAMS: String(n + 500),
        AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT: String(n + 500),
        AIAGENT_WATCH_STREAMS_PER_ADDRESS: String(n + 1000),
        ...extra,
      });
    if (only.has("W1") || only.has("W2") || only.has("W3") || only.has("W4")) {
      const service = await startServer(
        "service",
        main,
        ["serve"],
        serviceEnv({ AIAGENT_DB: workingCopy(d, work, "service") }),
        120_000,
      );
      servers.push(service);
      const f = await frameTarget("service", [service], d);
      // W4 first, on a fresh instance: the long conversation resumed from its start.
      if (only.has("W4")) results.service!.W4 = await w4(f.target);
      log(`service W4: ${JSON.stringify(results.service!.W4)}`);
      if (streamRows) {
        await f.converse(customers, () => service);
        await liveRows(f.target, results.service!);
      }
      results.service!.peakRssMb = mb(await service.stop());
    }

    if (only.has("W5")) {
      const admin = await benchPostgres();
      if (!admin) {
        results.service!.W5Skipped =
          "no PostgreSQL server answers (set AIAGENT_BENCH_DATABASE_URL, or run one on 127.0.0.1:5432)";
        log(`W5 skipped: ${results.service!.W5Skipped}`);
      } else {
        const pg = await copyToPostgres(admin, d, log);
        pgData = pg;
        const pgEnv = (name: string) =>
          serviceEnv({ AIAGENT_DB: join(work, `${name}.db`), AIAGENT_DATABASE_URL: pg.url });
        const a = await startServer("service-pg", main, ["serve"], pgEnv("service-pg"), 120_000);
        servers.push(a);
        const b = await startServer("service-pg-2", main, ["serve"], pgEnv("service-pg-2"), 120_000);
        servers.push(b);
        const f = await frameTarget("service-pg", [a, b], d);
        // Half of each customer's streams on each instance (its first token's on one, its second's on the other).
        await f.converse(customers, (_c, k) => (k < STREAMS_PER_CUSTOMER / 2 ? a : b));
        await liveRows(f.target, results.service!, { postgres: pg.server, url: pg.url });
        results.service!.peakRssMbPg = [mb(await a.stop()), mb(await b.stop())];
      }
    }
  } finally {
    for (const s of servers) await s.stop().catch(() => 0);
    await pgData?.drop();
    rmSync(work, { recursive: true, force: true });
    rmSync(buildDir, { recursive: true, force: true });
  }
  const s = results.service!;
  const b = results.bare!;
  const ratio = (x?: number, y?: number) => (x !== undefined && y ? `${(x / y).toFixed(2)}×` : "");
  const lines = [
    "| row | what | service | bare node:http | service ÷ bare | target |",
    "|---|---|--:|--:|--:|---|",
    ...(s.W1
      ? [
          `| W1 | ${s.W1?.streams ?? n} open frame streams (${s.W1?.failed ?? 0} of ${s.W1?.asked ?? n} failed to open), idle, heartbeats every ${heartbeatMs / 1000} s: RSS MB | ${s.W1?.rssMb} | ${b.W1?.rssMb} | ${ratio(s.W1?.rssMb, b.W1?.rssMb)} | ≤ 1,536 MB |`,
          `| W1 | idle CPU, % of one core | ${s.W1?.cpuPct} | ${b.W1?.cpuPct} | ${ratio(s.W1?.cpuPct, b.W1?.cpuPct)} | ≤ 5 % |`,
        ]
      : [`| W1 | open frame streams, idle | not run | — |  |  |`]),
    ...(s.W2
      ? [
          `| W2 | ${s.W2?.eventsPerSec} events/s achieved (${rate} offered): answer → delivery p99 ms | ${s.W2?.p99Ms} | ${b.W2?.p99Ms} | ${ratio(s.W2?.p99Ms, b.W2?.p99Ms)} | ≤ 250 ms |`,
          `| W2 | missed / duplicated of ${s.W2?.deliveries} deliveries | ${s.W2?.missed} / ${s.W2?.duplicated} | ${b.W2?.missed} / ${b.W2?.duplicated} |  | 0 / 0 |`,
          `| W2 | service CPU per event written, ms (the load generator's CPU: ${s.W2?.generatorCpuPct} % of a core) | ${s.W2?.cpuMsPerEvent} | ${b.W2?.cpuMsPerEvent} |  |  |`,
        ]
      : [`| W2 | events written to watched conversations | not run | — |  |  |`]),
    ...(s.W3
      ? [
          `| W3 | ${s.W3?.revoked} streams revoked at once (${s.W3?.failedRevocations ?? 0} of the calls failed): answer → end, max ms | ${s.W3?.maxMs} | ${b.W3?.maxMs} | ${ratio(s.W3?.maxMs, b.W3?.maxMs)} | ≤ 1,000 ms |`,
          `| W3 | the others keep receiving: deliveries got / expected | ${s.W3?.othersGot} / ${s.W3?.othersExpected} | ${b.W3?.othersGot} / ${b.W3?.othersExpected} |  | all |`,
        ]
      : [`| W3 | sessions revoked at once | not run | — |  |  |`]),
    ...(s.W4
      ? [
          `| W4 | resume ${s.W4?.events} events behind: events/s | ${s.W4?.eventsPerSec} | ${b.W4?.eventsPerSec} | ${ratio(s.W4?.eventsPerSec, b.W4?.eventsPerSec)} | ≥ 10,000 |`,
          `| W4 | RSS growth MB / headers ms | ${s.W4?.rssGrowthMb} / ${s.W4?.headersMs} | ${b.W4?.rssGrowthMb} / ${b.W4?.headersMs} |  | ≤ 50 MB / ≤ 100 ms |`,
        ]
      : [`| W4 | resume far behind | not run | — |  |  |`]),
    s.W5
      ? `| W5 | W2 on PostgreSQL ${s.W5.postgres}, ${s.W5.instances} instances (${s.W5.streamsPerInstance.join(" + ")} streams), ${s.W5.eventsPerSec} events/s achieved: answer → delivery p99 ms | ${s.W5.p99Ms} | — |  | ≤ 250 ms |`
      : `| W5 | W2 on PostgreSQL, two instances | ${s.W5Skipped ? `skipped: ${s.W5Skipped}` : "not run"} | — |  | as W2 |`,
    s.W5
      ? `| W5 | missed / duplicated of ${s.W5.deliveries} deliveries | ${s.W5.missed} / ${s.W5.duplicated} | — |  | 0 / 0 |`
      : "",
    s.W5
      ? `| W5 | CPU per event written, both instances, ms (their PostgreSQL backends: ${s.W5.pgCpuMsPerEvent} ms; the load generator's CPU: ${s.W5.generatorCpuPct} % of a core) | ${s.W5.cpuMsPerEvent} | — |  |  |`
      : "",
  ].filter(Boolean);
  const report = {
    kind: "live",
    at: new Date().toISOString(),
    options: { ...opt, streamsRun: n, streamsAsked: wanted, fdLimit },
    machine: {
      cpus: `${cpus().length} × ${cpus()[0]?.model}`,
      memoryGb: Math.round(totalmem() / 1e9),
      kernel: release(),
      node: process.version,
      loadBefore,
      loadAfter: loadavg(),
    },
    results,
  };
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `live-${report.at.replace(/[:.]/g, "-").slice(0, 19)}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(
    `${lines.join("\n")}\n\nload average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${report.machine.loadAfter.map((x) => x.toFixed(2)).join(" ")}; ${file}\n`,
  );
}

/**
 * The service as a target: `instances` share one database; requests go to them in turn (tokens, writes), and
 * `converse` makes each customer's tokens and conversation, placing each of its streams on the instance chosen.
 */
async function frameTarget(name: string, instances: ServerProcess[], d: Dataset) {
  const seed = d.seed;
  let turn = 0;
  const base = () => instances[turn++ % instances.length]!.url;
  const idToken = (
    await ok(
      call(base(), "POST", "/get_id_token", { user_email_id: seed.email, client_api_key: seed.client_api_key }),
      "get_id_token",
    )
  ).body.data.idToken as string;
  const auth = { authorization: `Bearer ${idToken}` };
  const token = async (userId: string) =>
    (
      await ok(
        call(base(), "POST", "/ai_agent/get_access_token", {
          user_id: userId,
          chatbot_id: seed.chatbot_id,
          client_api_key: seed.client_api_key,
        }),
        "get_access_token",
      )
    ).body.data.access_token as string;
  const taken = new Set<string>();
  const convTokens = new Map<string, string>();
  const first = instances[0]!;
  const longToken = await token(seed.long!.user_id);
  const target: Target = {
    name,
    server: first,
    instances,
    port: Number(new URL(first.url).port),
    streams: [],
    write: async (conv, k) => {
      const tok = convTokens.get(conv)!;
      const at = base();
      if (k === 1) {
        // One event: an operator's reply (the conversation is taken over once, on its first such write).
        if (!taken.has(conv)) {
          taken.add(conv);
          await ok(
            call(at, "POST", "/take_over_conversation", { conversation_id: conv }, auth),
            "take_over_conversation",
          );
        }
        const r = await ok(
          call(at, "POST", "/reply_to_conversation", { conversation_id: conv, content: "On its way." }, auth),
          "reply_to_conversation",
        );
        return { ids: [messageIdOf(r.body)], at: r.at };
      }
      const r = await ok(
        call(at, "POST", `/ai_agent/send_message?access_token=${tok}`, {
          conversation_id: conv,
          content: "Do you ship to Canada, and how long does it take?",
        }),
        "send_message",
      );
      return { ids: [r.body.data.user_message.message_id, r.body.data.reply.message_id], at: r.at };
    },
    revoke: async (c) =>
      (await ok(call(base(), "POST", "/v1/account/sessions/revoke", { user_id: `live-${c}` }, auth), "revoke")).at,
    backlogPath: `/watch_conversation?conversation_id=${seed.long!.conversation_id}&after_message_order=0&access_token=${longToken}`,
    backlog: seed.long!.messages,
  };
  /** Each customer's two tokens and conversation, and its streams (stream `k` of customer `c` on `place(c, k)`). */
  const converse = async (customers: number, place: (c: number, k: number) => ServerProcess) => {
    const t0 = Date.now();
    await pool(customers, 32, async (c) => {
      const [a, b] = [await token(`live-${c}`), await token(`live-${c}`)];
      const r = await ok(
        call(base(), "POST", `/ai_agent/send_message?access_token=${a}`, { content: "Hello, is anyone there?" }),
        "send_message",
      );
      const conv = r.body.data.conversation_id as string;
      convTokens.set(conv, a);
      for (let k = 0; k < STREAMS_PER_CUSTOMER; k++)
        target.streams[c * STREAMS_PER_CUSTOMER + k] = {
          path: `/watch_conversation?conversation_id=${conv}&after_message_order=2&access_token=${k < STREAMS_PER_CUSTOMER / 2 ? a : b}`,
          conv,
          customer: c,
          port: Number(new URL(place(c, k).url).port),
        };
    });
    log(
      `${name}: ${customers} customers, ${customers * 2} tokens and conversations made in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
  };
  return { target, converse };
}

function messageIdOf(body: any): string {
  return (body?.data?.message_id ?? "") as string;
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    for (const s of servers) void s.stop();
    process.exit(1);
  },
);

/**
 * Waits until the process `pid` used under a tenth of a core over the last whole second (sampled every 250 ms), or
 * `maxMs` passed: how long it took, and whether it got quiet.
 */
async function settle(pid: number, maxMs: number): Promise<{ ms: number; quiet: boolean }> {
  const t0 = performance.now();
  const samples = [{ at: t0, cpu: cpuMicros(pid) }];
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = { at: performance.now(), cpu: cpuMicros(pid) };
    // The newest sample at least a second old: the service's share of a core since then.
    const from = samples.findLast((x) => now.at - x.at >= 1000);
    samples.push(now);
    if (from && (now.cpu - from.cpu) / 1000 / (now.at - from.at) < 0.1) return { ms: now.at - t0, quiet: true };
    if (now.at - t0 >= maxMs) return { ms: now.at - t0, quiet: false };
  }
}
