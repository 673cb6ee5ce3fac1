import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { peakRss } from "./proc.js";

/** A server the benchmark started, with what it needs to measure it. */
export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  /** Peak RSS seen so far, in bytes. */
  peakRss(): number;
  /** Stops it (SIGTERM, then SIGKILL after a grace period); resolves with its final peak RSS. */
  stop(): Promise<number>;
}

/**
 * The environment the benchmarks serve the service with: production mode, rate limits off (the load comes from one
 * address), info logs (the "listening" line says where), any free port on loopback; `extra` adds or overrides.
 */
export function servedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AIAGENT_RATE_LIMIT: "off",
    AIAGENT_LOG_LEVEL: "info",
    AIAGENT_PORT: "0",
    AIAGENT_HOST: "127.0.0.1",
    NODE_ENV: "production",
    ...extra,
  };
}

/**
 * Starts `node <script> ...args` and waits (at most timeoutMs) for the line that says where it listens:
 * `ready <url>` from the bench servers, or the service's JSON log line `{"msg":"listening","url":...}`.
 */
export function startServer(
  name: string,
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
): Promise<ServerProcess> {
  // AIAGENT_BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"): flags for every server the bench starts, to
  // profile one row (--cpu-prof is refused in NODE_OPTIONS).
  const nodeArgs = (process.env.AIAGENT_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // AIAGENT_BENCH_CHILD_LOG (a directory): each server's stdout and stderr also go to <dir>/<name>-<pid>.log, e.g.
  // with AIAGENT_BENCH_NODE_ARGS="--trace-gc" to see a row's collections.
  const logDir = process.env.AIAGENT_BENCH_CHILD_LOG;
  if (logDir) {
    const file = createWriteStream(join(logDir, `${name.replace(/\W+/g, "-")}-${child.pid}.log`));
    child.stdout!.pipe(file);
    child.stderr!.pipe(file);
  }
  let output = "";
  let lastRss = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start within ${timeoutMs} ms:\n${output.slice(-2000)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.length > 100_000) output = output.slice(-50_000);
      const url = /^ready (\S+)$/m.exec(output)?.[1] ?? listeningUrl(output);
      if (!url) return;
      clearTimeout(timer);
      child.stdout!.off("data", onData);
      // Keep draining so a chatty child never blocks on a full pipe.
      child.stdout!.on("data", () => undefined);
      const pid = child.pid!;
      const server: ServerProcess = {
        name,
        url,
        pid,
        peakRss: () => {
          try {
            lastRss = Math.max(lastRss, peakRss(pid));
          } catch {
            // Gone already: the last reading stands.
          }
          return lastRss;
        },
        stop: () =>
          new Promise((done) => {
            server.peakRss();
            if (child.exitCode !== null) return done(lastRss);
            const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
            child.once("exit", () => {
              clearTimeout(kill);
              done(lastRss);
            });
            child.kill("SIGTERM");
          }),
      };
      resolve(server);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening:\n${output.slice(-2000)}`));
    });
  });
}

function listeningUrl(output: string): string | undefined {
  for (const line of output.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === "listening" && rec.url) return rec.url;
    } catch {
      // Not a log line.
    }
  }
  return undefined;
}
