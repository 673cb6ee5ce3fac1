import { copyFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { buildForBench } from "./build.js";
import { type ServerProcess, servedEnv, startServer } from "./procs.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * The options every side-by-side bench takes (bench/ab.ts, bench/ab-live.ts), with its own (as strings): `--base`
 * (the other checkout, required), `--rounds` (6) and `--cache` (the bench's cache under `root`).
 */
export function abOptions(
  root: string,
  own: Options,
): { [own: string]: string | number | undefined; base: string; rounds: number; cache: string } {
  const values = parseArgs({
    options: {
      base: { type: "string" },
      rounds: { type: "string", default: "6" },
      cache: { type: "string", default: join(root, "node_modules", ".cache", "aiagent-bench") },
      ...own,
    },
  }).values as Record<string, string | undefined>;
  if (!values.base) throw new Error("--base: the other checkout (its node_modules installed)");
  return { ...values, base: resolve(values.base), rounds: Number(values.rounds), cache: values.cache! };
}

/**
 * One side: the checkout at `root` built (inside it, so that its packages resolve), served on its own copy of
 * `dbFile` in `work`, with `env` added; AIAGENT_AB_NODE_ARGS_<name> gives its node flags (the same build on both sides
 * then measures a flag).
 */
export async function abSide(
  name: string,
  root: string,
  dbFile: string,
  work: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ build: string; server: ServerProcess }> {
  const build = await buildForBench(
    root,
    join(root, "node_modules", ".cache", "aiagent-bench", `ab-${name}-${process.pid}`),
  );
  const db = join(work, `${name}.db`);
  copyFileSync(dbFile, db);
  const saved = process.env.AIAGENT_BENCH_NODE_ARGS;
  process.env.AIAGENT_BENCH_NODE_ARGS = `${saved ?? ""} ${process.env[`AIAGENT_AB_NODE_ARGS_${name}`] ?? ""}`;
  try {
    const server = await startServer(
      name,
      join(build, "src/cli/main.js"),
      ["serve"],
      servedEnv({ AIAGENT_DB: db, AIAGENT_ACCESS_TOKEN_TTL: "7200", ...env }),
      120_000,
    );
    return { build, server };
  } finally {
    if (saved === undefined) delete process.env.AIAGENT_BENCH_NODE_ARGS;
    else process.env.AIAGENT_BENCH_NODE_ARGS = saved;
  }
}
