import { execFileSync, spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** One HTTP request of a scenario's rotation. */
export interface HttpRequestSpec {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * A header given a value never sent before on every request (an `Idempotency-Key`, so each request is a new
   * keyed write, never a replay): the run's prefix and a counter. Closed loops only (wrk and autocannon).
   */
  freshHeader?: string;
}

let runs = 0;
/** A prefix no other run of any process shares, for `freshHeader` values. */
export function runPrefix(): string {
  return `${process.pid.toString(36)}-${Date.now().toString(36)}-${(++runs).toString(36)}`;
}

/** What a load run measured, from the client's side. */
export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Us: number;
  p99Us: number;
  /** Connection errors, timeouts and non-2xx answers (open loop: connection errors and non-2xx answers). */
  errors: number;
  /** Open loop only: requests given up on unanswered (an overloaded server), counted in p99 at their wait so far. */
  unanswered?: number;
}

/** How hard and how long to drive a server. */
export interface LoadShape {
  connections: number;
  seconds: number;
  /** An offered rate (req/s) for an open loop; absent: a closed loop, each connection sending as fast as answered. */
  rate?: number | undefined;
}

/** Which HTTP/1.1 load generator this run uses. */
export type Generator = "wrk" | "autocannon";

function has(cmd: string): boolean {
  return spawnSync(cmd, ["--version"], { stdio: "ignore" }).error === undefined;
}

/**
 * wrk if it is installed; if not and we are root with apt-get, installs Debian's wrk (as .ci/run does);
 * otherwise autocannon, the npm devDependency.
 */
export function chooseGenerator(log: (s: string) => void): Generator {
  if (has("wrk")) return "wrk";
  if (process.getuid?.() === 0 && has("apt-get")) {
    log("wrk is missing: installing Debian's wrk package");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    let r = spawnSync("apt-get", ["install", "-y", "-qq", "wrk"], { stdio: "ignore", env, timeout: 180_000 });
    if (r.status !== 0) {
      spawnSync("apt-get", ["update", "-qq"], { stdio: "ignore", env, timeout: 180_000 });
      r = spawnSync("apt-get", ["install", "-y", "-qq", "wrk"], { stdio: "ignore", env, timeout: 180_000 });
    }
    if (has("wrk")) return "wrk";
  }
  log("wrk is not available: using autocannon");
  return "autocannon";
}

/** A Lua string literal for any bytes. */
function lua(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, "utf8")) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${String(b).padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** The wrk script: a fixed rotation of requests, and a JSON summary printed at the end. */
function wrkScript(requests: HttpRequestSpec[]): string {
  const specs = requests
    .map((r) => {
      const headers = Object.entries({
        ...(r.body !== undefined ? { "content-type": "application/json" } : {}),
        ...r.headers,
      })
        .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
        .join(",");
      const fresh = r.freshHeader === undefined ? "nil" : lua(r.freshHeader);
      return `{${lua(r.method)},${lua(r.path)},{${headers}},${r.body === undefined ? "nil" : lua(r.body)},${fresh}}`;
    })
    .join(",\n");
  return `
local specs = {${specs}}
local prefix = ${lua(runPrefix())}
local reqs = {}
local n = 0
local k = 0
function init(args)
  for i, s in ipairs(specs) do reqs[i] = wrk.format(s[1], s[2], s[3], s[4]) end
end
function request()
  n = n % #reqs + 1
  local s = specs[n]
  if s[5] == nil then return reqs[n] end
  k = k + 1
  s[3][s[5]] = prefix .. "-" .. k
  return wrk.format(s[1], s[2], s[3], s[4])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"duration_us":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/** Drives an HTTP/1.1 server with wrk (one thread, keep-alive). */
export async function runWrk(
  baseUrl: string,
  requests: HttpRequestSpec[],
  shape: LoadShape,
  tmpDir: string,
): Promise<LoadResult> {
  const script = join(tmpDir, "scenario.lua");
  writeFileSync(script, wrkScript(requests));
  const seconds = Math.max(1, Math.round(shape.seconds));
  const out = await run(
    "wrk",
    ["-t1", `-c${shape.connections}`, `-d${seconds}s`, "--timeout", "5s", "-s", script, baseUrl],
    (seconds + 30) * 1000,
  );
  const m = /RESULT (\{.*\})/.exec(out);
  if (!m) throw new Error(`wrk printed no result:\n${out}`);
  const r = JSON.parse(m[1]!) as { requests: number; duration_us: number; errors: number; p50: number; p99: number };
  const secs = r.duration_us / 1e6;
  return { requests: r.requests, seconds: secs, rps: r.requests / secs, p50Us: r.p50, p99Us: r.p99, errors: r.errors };
}

/** Runs a command with a time limit; resolves with its stdout, rejects on a non-zero exit. */
export function run(cmd: string, args: string[], timeoutMs: number, input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} exited with ${code}: ${err || out}`));
    });
    child.stdin.end(input ?? "");
  });
}

/** Drives an HTTP/1.1 server with autocannon in a child process (when wrk is missing). */
export async function runAutocannon(
  node: string,
  childScript: string,
  baseUrl: string,
  requests: HttpRequestSpec[],
  shape: LoadShape,
): Promise<LoadResult> {
  const out = await run(
    node,
    [childScript],
    (shape.seconds + 30) * 1000,
    JSON.stringify({ url: baseUrl, requests, ...shape }),
  );
  return JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
}

/** Drives an HTTP/1.1 server at a fixed offered rate (open loop), from a child process. */
export async function runOpenLoop(
  node: string,
  childScript: string,
  baseUrl: string,
  requests: HttpRequestSpec[],
  shape: LoadShape,
): Promise<LoadResult> {
  if (!shape.rate) throw new Error("an open loop needs a rate");
  const out = await run(
    node,
    [childScript],
    (shape.seconds + 30) * 1000,
    JSON.stringify({ url: baseUrl, requests, ...shape }),
  );
  return JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
}

/** One gRPC unary call, sent over and over on HTTP/2. */
export interface GrpcSpec {
  path: string;
  /** The protobuf-encoded request message. */
  message: Uint8Array;
  headers?: Record<string, string>;
}

/** Drives a server's gRPC endpoint from a child process: `connections` HTTP/2 sessions, streams spread over them. */
export async function runGrpc(
  node: string,
  childScript: string,
  baseUrl: string,
  spec: GrpcSpec,
  shape: LoadShape,
): Promise<LoadResult> {
  const input = JSON.stringify({
    url: baseUrl,
    path: spec.path,
    message: Buffer.from(spec.message).toString("base64"),
    headers: spec.headers ?? {},
    ...shape,
  });
  const out = await run(node, [childScript], (shape.seconds + 30) * 1000, input);
  return JSON.parse(out.trim().split("\n").pop()!) as LoadResult;
}

/** The installed wrk's version line, for the report. */
export function generatorVersion(g: Generator): string {
  if (g === "autocannon") return "autocannon 8";
  try {
    return execFileSync("wrk", ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
      .split("\n")[0]!
      .trim();
  } catch (e) {
    // wrk --version exits non-zero after printing its banner.
    const out = (e as { stdout?: string }).stdout ?? "";
    return out.split("\n")[0]?.trim() || "wrk";
  }
}
