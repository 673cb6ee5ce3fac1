import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** The frame's browser script, bundled once per process and kept in memory. */
let script: Promise<string> | undefined;

/**
 * The frame's browser script. From the sources (tests, tsx) it is bundled on first use with esbuild, so it is always
 * current and nothing built is committed; from dist/ the file `npm run build` wrote is read.
 */
export function frameScript(): Promise<string> {
  script ??= load().catch((e: unknown) => {
    script = undefined;
    throw e;
  });
  return script;
}

async function load(): Promise<string> {
  const source = fileURLToPath(new URL("./browser/main.ts", import.meta.url));
  if (existsSync(source)) return bundle(source);
  // dist/src/frame/bundle.js → dist/frame/frame.js (written by `npm run build:frame`).
  const prebuilt = fileURLToPath(new URL("../../frame/frame.js", import.meta.url));
  return readFile(prebuilt, "utf8");
}

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
