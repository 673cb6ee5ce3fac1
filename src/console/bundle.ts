import { browserScript, keptOnce } from "../frame/bundle.js";

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

/**
 * The console's browser script. From the sources (tests, tsx) it is bundled on first use and kept in memory; from
 * dist/ the file `npm run build` wrote (dist/console/console.js) is read.
 */
export const consoleScript = keptOnce(() =>
  // dist/src/console/bundle.js → dist/console/console.js (written by `npm run build:console`).
  browserScript(
    new URL("./browser/main.tsx", import.meta.url),
    new URL("../../console/console.js", import.meta.url),
    build,
  ),
);

async function build(source: string): Promise<string> {
  const esbuild = await import("esbuild");
  const out = await esbuild.build({ ...CONSOLE_BUILD, entryPoints: [source], write: false, logLevel: "silent" });
  return out.outputFiles[0]!.text;
}
