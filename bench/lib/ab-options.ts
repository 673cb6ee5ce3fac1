import { copyFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { buildForBench } from "./build.js";
import { type ServerProcess, servedEnv, startServer } from "./procs.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * The options every side-by-side bench takes (bench/ab.ts, bench/ab-live.ts), with its own (as strings): `--base`
 * (the other checkout, required), `--rounds` (6) and `--cache` (the bench's cache under `root`). `--help` prints
 * `script`'s opening comment (its usage) and exits.
 */
export function abOptions(
  root: string,
  own: Options,
  script = process.argv[1],
): { [own: string]: string | number | undefined; base: string; rounds: number; cache: string } {
  const values = parseArgs({
    options: {
      help: { type: "boolean", short: "h" },
      base: { type: "string" },
      rounds: { type: "string", default: "6" },
      cache: { type: "string", default: join(root, "node_modules", ".cache", "aiagent-bench") },
      ...own,
    },
  }).values as Record<string, string | boolean | undefined>;
  if (values.help) {
    process.stdout.write(`${usage(script)}\n`);
    process.exit(0);
  }
  if (!values.base) throw new Error("--base: the other checkout (its node_modules installed)");
  return {
    ...(values as Record<string, string | undefined>),
    base: resolve(values.base as string),
    rounds: Number(values.rounds),
    cache: values.cache as string,
  };
}

/** A bench script's opening comment without its `// ` marks: what it measures and how it is called. */
function usage(script: string | undefined): string {
  if (!script) return "";
  const lines = readFileSync(script, "utf8").split("\n");
  const end = lines.findIndex((l) => !l.startsWith("//"));
  return lines
    .slice(0, end < 0 ? lines.length : end)
    .map((l) => l.replace(/^\/\/ ?/, ""))
    .join("\n");
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
