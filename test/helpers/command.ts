import { createHash, randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative, resolve } from "node:path";
import { buildSync, version as esbuildVersion } from "esbuild";

/**
 * The `aiagent` command for a test's child process, as node's arguments: `spawn(process.execPath, [...aiagentCommand(),
 * "serve", ...])`. It is the checkout's own src/cli/main.ts, compiled once per state of the sources instead of being
 * compiled again by tsx in every child (a child started through tsx takes two to three times as long to start, and
 * the suite starts about a hundred): esbuild, the compiler tsx itself uses, writes each file of src/ and gen/ to
 * tmp/test-command/<hash of the sources>/ beside a copy of the sources, and every other entry of the checkout is
 * linked in, so paths relative to a module (docs, the browser scripts built from their sources, the extraction
 * worker) resolve as they do from src/. The modules are plain JavaScript there, so the knowledge extraction worker runs
 * as it does from dist/ (without tsx), the way an installed service runs it.
 *
 * A change to any source gives a new hash, hence a new build; workers that ask at the same moment build in folders
 * of their own and the first rename wins. AIAGENT_TEST_COMMAND=tsx runs the sources through tsx instead.
 */
export function aiagentCommand(): string[] {
  if (process.env.AIAGENT_TEST_COMMAND === "tsx") return ["--import", "tsx", join(ROOT, "src/cli/main.ts")];
  return [join(compiledCheckout(), "src/cli/main.js")];
}

const ROOT = resolve(import.meta.dirname, "../..");
const COMPILED = ["src", "gen"];
const HOME = join(ROOT, "tmp", "test-command");
let built: string | undefined;

/** The compiled copy of the checkout (built on first use in this process, or found already built). */
export function compiledCheckout(): string {
  if (built && existsSync(join(built, ".complete"))) return built;
  const files = COMPILED.flatMap((d) => walk(join(ROOT, d))).sort();
  const hash = createHash("sha256").update(esbuildVersion);
  for (const f of files) hash.update(relative(ROOT, f)).update("\0").update(readFileSync(f)).update("\0");
  const key = hash.digest("hex").slice(0, 16);
  const dir = join(HOME, key);
  if (!existsSync(join(dir, ".complete"))) build(dir, files);
  prune(key);
  built = dir;
  return dir;
}

function build(dir: string, files: string[]): void {
  const scratch = `${dir}.${process.pid}.${randomBytes(4).toString("hex")}`;
  mkdirSync(scratch, { recursive: true });
  try {
    for (const d of COMPILED) cpSync(join(ROOT, d), join(scratch, d), { recursive: true });
    buildSync({
      // The browser scripts are bundled from their sources at run time (src/console/bundle.ts, src/frame/bundle.ts).
      entryPoints: files.filter((f) => /\.ts$/.test(f) && !f.endsWith(".d.ts") && !/[/\\]browser[/\\]/.test(f)),
      outdir: scratch,
      outbase: ROOT,
      format: "esm",
      platform: "node",
      target: `node${process.versions.node.split(".")[0]}`,
      logLevel: "error",
    });
    for (const e of readdirSync(ROOT))
      if (![...COMPILED, "tmp", ".git"].includes(e)) symlinkSync(join(ROOT, e), join(scratch, e));
    writeFileSync(join(scratch, ".complete"), "");
    try {
      renameSync(scratch, dir);
    } catch (e) {
      // Another worker's identical build got there first.
      if (!existsSync(join(dir, ".complete"))) throw e;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Removes builds of earlier states of the sources (an hour old, so a run still using one is not disturbed). */
function prune(current: string): void {
  for (const e of readdirSync(HOME)) {
    const p = join(HOME, e);
    try {
      if (e !== current && Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
    } catch {
      // gone already (another worker's scratch folder, renamed or removed)
    }
  }
}

function walk(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
  );
}
