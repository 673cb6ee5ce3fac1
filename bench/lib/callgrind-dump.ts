import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ParseArgsConfig } from "node:util";
import { servedEnv } from "./procs.js";

/**
 * The options every per-call cost script takes (bench/repro/token-cost.ts, read-cost.ts): the checkouts to compare,
 * the rows, how many calls are counted after how many warm-up calls, on how many lanes, how many alternated rounds,
 * and the tool; each script gives its own defaults.
 */
export function costOptions(d: { checkouts: string; rows: string; n: string; warmup: string; tool: string }) {
  return {
    checkouts: { type: "string", default: d.checkouts },
    rows: { type: "string", default: d.rows },
    n: { type: "string", default: d.n },
    rounds: { type: "string", default: "2" },
    connections: { type: "string", default: "4" },
    warmup: { type: "string", default: d.warmup },
    tool: { type: "string", default: d.tool },
  } as const satisfies NonNullable<ParseArgsConfig["options"]>;
}

/**
 * The instructions of the callgrind dump made after the counters were zeroed (`<work>/<name>.callgrind.<n>`, the
 * lowest part number), and `measure(file)` of it; the dumps are then removed, copied first to AIAGENT_COST_KEEP (a
 * directory) when it is set, for callgrind_annotate.
 */
export function callgrindDump<T>(work: string, name: string, measure: (file: string) => T): { total: number; of: T } {
  const parts = readdirSync(work)
    .filter((f) => f.startsWith(`${name}.callgrind.`))
    .map((f) => Number(f.slice(`${name}.callgrind.`.length)))
    .filter((n) => Number.isFinite(n))
    .sort((a, b) => a - b);
  const file = join(work, `${name}.callgrind.${parts[0]}`);
  const m = /^(?:summary|totals): (\d+)/m.exec(readFileSync(file, "utf8"));
  if (!m) throw new Error(`no totals in ${file}`);
  const of = measure(file);
  const keep = process.env.AIAGENT_COST_KEEP;
  if (keep) copyFileSync(file, join(keep, `${name}.callgrind`));
  for (const f of readdirSync(work)) if (f.startsWith(`${name}.callgrind`)) rmSync(join(work, f), { force: true });
  return { total: Number(m[1]), of };
}

/**
 * A built server (`<build>/src/cli/main.js serve`) as the cost scripts start it: under callgrind when `callgrindOut`
 * is given (every thread, from the start; zeroed and dumped on demand), with `nodeFlags` and AIAGENT_COST_NODE_ARGS
 * (e.g. --trace-deopt), idle connections kept (under valgrind a lane can stay idle past the default 5 s while the
 * counters are zeroed or dumped), its output piped.
 */
export function costServer(o: {
  build: string;
  callgrindOut: string | undefined;
  nodeFlags?: string[];
  env: NodeJS.ProcessEnv;
}): ChildProcessWithoutNullStreams {
  const nodeArgs = [
    ...(o.nodeFlags ?? []),
    ...(process.env.AIAGENT_COST_NODE_ARGS ?? "").split(" ").filter(Boolean),
    join(o.build, "src/cli/main.js"),
    "serve",
  ];
  const env = servedEnv({ AIAGENT_LOG_LEVEL: "info", AIAGENT_IDLE_TIMEOUT_MS: "600000", ...o.env });
  if (o.callgrindOut === undefined) return spawn(process.execPath, nodeArgs, { env, stdio: "pipe" });
  const valgrind = [
    "--tool=callgrind",
    "--smc-check=all-non-file",
    "--collect-atstart=yes",
    "--dump-instr=no",
    `--callgrind-out-file=${o.callgrindOut}`,
  ];
  return spawn("valgrind", [...valgrind, process.execPath, ...nodeArgs], { env, stdio: "pipe" });
}
