import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
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

/** The frame's browser script, bundled once per process and kept in memory. */
export const frameScript = keptOnce(() =>
  // dist/src/frame/bundle.js → dist/frame/frame.js (written by `npm run build:frame`).
  browserScript(new URL("./browser/main.ts", import.meta.url), new URL("../../frame/frame.js", import.meta.url)),
);

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
