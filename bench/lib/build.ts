import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { build } from "esbuild";

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules" && !e.name.startsWith(".") && e.name !== "results") out.push(...tsFiles(p));
    } else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/**
 * Compiles src/, gen/ and bench/ to plain JavaScript (esbuild, no bundling: one .js per .ts, the same module
 * graph tsc would emit), so the servers run as built code, like `npm start`, not through a loader.
 * Returns the output directory; src/cli/main.ts is at <out>/src/cli/main.js.
 */
export async function buildForBench(root: string, out: string): Promise<string> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const entryPoints = ["src", "gen", "bench"].flatMap((d) => tsFiles(join(root, d)));
  await build({
    entryPoints,
    outdir: out,
    outbase: root,
    format: "esm",
    platform: "node",
    target: "node20",
    bundle: false,
    sourcemap: false,
    logLevel: "error",
  });
  // The output may sit under node_modules/.cache, outside the package scope: say it is ESM.
  writeFileSync(join(out, "package.json"), JSON.stringify({ type: "module", private: true }));
  return out;
}

/** Where a source file of the repository lands in the build. */
export function builtPath(root: string, out: string, source: string): string {
  return join(out, relative(root, source)).replace(/\.ts$/, ".js");
}
