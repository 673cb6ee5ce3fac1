import { createHash } from "node:crypto";
import {
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { SeedResult } from "../seed/seed.js";
import { run } from "./load.js";

/** A seeded database kept between runs, and how it was made. */
export interface Dataset {
  scale: string;
  /** The pristine file; runs work on copies. */
  path: string;
  seed: SeedResult;
  /** True when this run built it (so `seed.seconds` was measured now). */
  builtNow: boolean;
}

// A cached dataset is reused only while the code that shapes it is unchanged.
const SHAPING = [
  "bench/seed/main.ts",
  "bench/seed/seed.ts",
  "bench/seed/sizes.ts",
  "bench/seed/words.ts",
  "src/domain/bulk.ts",
  "src/storage/sqlite/bulk.ts",
  "src/storage/sqlite/migrations.ts",
  "src/storage/sqlite/repos/contact-rowid.ts",
  "src/domain/token/key-sealer.ts",
];

function fingerprint(root: string, scale: string): string {
  const h = createHash("sha256").update(scale);
  for (const f of SHAPING) h.update(readFileSync(join(root, f)));
  return h.digest("hex").slice(0, 12);
}

/**
 * The dataset of a scale: reused from the cache when its shaping code is unchanged (and `fresh` is false),
 * otherwise seeded now by bench/seed/main.ts from the build, in a child process, its time measured.
 */
export async function dataset(o: {
  root: string;
  buildDir: string;
  cacheDir: string;
  scale: string;
  fresh: boolean;
  log: (s: string) => void;
}): Promise<Dataset> {
  const dir = join(o.cacheDir, "data");
  mkdirSync(dir, { recursive: true });
  const fp = fingerprint(o.root, o.scale);
  const path = join(dir, `${o.scale}-${fp}.db`);
  const meta = path.replace(/\.db$/, ".json");
  // Older datasets of this scale are large and of no further use.
  for (const f of readdirSync(dir))
    if (f.startsWith(`${o.scale}-`) && !f.startsWith(`${o.scale}-${fp}.`)) rmSync(join(dir, f), { force: true });
  if (!o.fresh && existsSync(path) && existsSync(meta)) {
    return { scale: o.scale, path, seed: JSON.parse(readFileSync(meta, "utf8")) as SeedResult, builtNow: false };
  }
  rmSync(path, { force: true });
  const tmp = `${path}.tmp`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(tmp + suffix, { force: true });
  o.log(`seeding ${o.scale} (bench/seed --scale ${o.scale})…`);
  const out = await run(
    process.execPath,
    [
      join(o.buildDir, "bench/seed/main.js"),
      "--db",
      tmp,
      "--email",
      `bench-${o.scale}@bench.example`,
      "--scale",
      o.scale,
    ],
    600_000,
  );
  const seed = JSON.parse(out.trim().split("\n").pop()!) as SeedResult;
  renameSync(tmp, path);
  writeFileSync(meta, JSON.stringify(seed));
  return { scale: o.scale, path, seed, builtNow: true };
}

/** A working copy of a dataset for one server (copy-on-write where the file system can). */
export function workingCopy(d: Dataset, dir: string, name: string): string {
  const target = join(dir, `${name}.db`);
  copyFileSync(d.path, target, constants.COPYFILE_FICLONE);
  return target;
}

/**
 * The path of a dataset of `scale` already seeded in `cacheDir` (a script's input that a bench run leaves behind), or
 * an error saying which command seeds it.
 */
export function cachedDataset(cacheDir: string, scale: string, seedWith = "npm run bench -- --quick"): string {
  const dir = join(cacheDir, "data");
  const name = existsSync(dir)
    ? readdirSync(dir).find((f) => f.startsWith(`${scale}-`) && f.endsWith(".db"))
    : undefined;
  if (!name) throw new Error(`no ${scale} dataset in ${dir}: run \`${seedWith}\` once first`);
  return join(dir, name);
}
