import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";

/** What `load` answers, made on first use and kept; a failed load is tried again on the next call, not kept. */
export function keptOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () =>
    (kept ??= load().catch((e: unknown) => {
      kept = undefined;
      throw e;
    }));
}

/**
 * A browser script: from the sources (tests, tsx) the entry point bundled now, so it is always current and nothing
 * built is committed; from dist/ the file `npm run build` wrote there.
 */
export async function browserScript(
  entry: URL,
  prebuilt: URL,
  build: (entry: string) => Promise<string> = bundle,
): Promise<string> {
  const source = fileURLToPath(entry);
  if (existsSync(source)) return build(source);
  return readFile(fileURLToPath(prebuilt), "utf8");
}

/**
 * The chat frame's script as esbuild splits it (format esm, `splitting`): `frame.js`, the module the page loads, and
 * the chunks it imports on demand (the sending of files, the e-mail prompt, the rating), by file name; all served from the frame's
 * asset path. Keep these options in step with the `frame` bundle of scripts/build-frame.mjs (`npm run build:frame`).
 * ES2022: class fields stay as they are; lowered (ES2020), their helper is code the chunks share with frame.js, which
 * esbuild then moves into a chunk of its own that the first paint has to load as well.
 */
export const FRAME_BUILD = {
  bundle: true,
  format: "esm",
  splitting: true,
  entryNames: "frame",
  chunkNames: "[name]-[hash]",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
} as const;

/** The file the frame's page loads; the other files of frameFiles() are loaded by it. */
export const FRAME_ENTRY = "frame.js";

/** The frame's script files by name, bundled once per process and kept in memory (or read from dist/frame/). */
export const frameFiles = keptOnce(async (): Promise<ReadonlyMap<string, string>> => {
  const source = fileURLToPath(new URL("./browser/main.ts", import.meta.url));
  if (existsSync(source)) {
    const esbuild = await import("esbuild");
    // Nothing is written: outdir only names the files.
    const out = await esbuild.build({
      ...FRAME_BUILD,
      entryPoints: [source],
      outdir: "/frame",
      write: false,
      logLevel: "silent",
    });
    return new Map(out.outputFiles.map((f) => [basename(f.path), f.text]));
  }
  // dist/src/frame/bundle.js → dist/frame/ (written by `npm run build:frame`, which removes the chunks of earlier builds).
  const dir = fileURLToPath(new URL("../../frame/", import.meta.url));
  const names = (await readdir(dir)).filter((name) => name.endsWith(".js"));
  return new Map(
    await Promise.all(names.map(async (name) => [name, await readFile(join(dir, name), "utf8")] as const)),
  );
});

/** The module the frame's page loads (frame.js). */
export const frameScript = async (): Promise<string> => (await frameFiles()).get(FRAME_ENTRY)!;

/** Bundles the browser entry point; keep these options in step with scripts/build-frame.mjs (`npm run build:frame`). */
export async function bundle(entry: string): Promise<string> {
  const esbuild = await import("esbuild");
  const out = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    target: "es2020",
    minify: true,
    legalComments: "none",
    charset: "utf8",
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}
