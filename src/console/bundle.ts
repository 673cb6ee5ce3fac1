import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** The console's esbuild options; keep them in step with the `console` bundle of scripts/build-frame.mjs. */
export const CONSOLE_BUILD = {
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  jsx: "automatic",
  jsxImportSource: "preact",
} as const;

let script: Promise<string> | undefined;

/**
 * The console's browser script. From the sources (tests, tsx) it is bundled on first use and kept in memory; from
 * dist/ the file `npm run build` wrote (dist/console/console.js) is read.
 */
export function consoleScript(): Promise<string> {
  script ??= load().catch((e: unknown) => {
    script = undefined;
    throw e;
  });
  return script;
}

async function load(): Promise<string> {
  const source = fileURLToPath(new URL("./browser/main.tsx", import.meta.url));
  if (existsSync(source)) {
    const esbuild = await import("esbuild");
    const out = await esbuild.build({ ...CONSOLE_BUILD, entryPoints: [source], write: false, logLevel: "silent" });
    return out.outputFiles[0]!.text;
  }
  // dist/src/console/bundle.js → dist/console/console.js (written by `npm run build:console`).
  return readFile(fileURLToPath(new URL("../../console/console.js", import.meta.url)), "utf8");
}
