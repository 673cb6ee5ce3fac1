// Bundles the chat frame's script into dist/frame/frame.js, only when one of its inputs (or the build options)
// changed since the last bundle: esbuild's metafile lists the inputs, so nothing else needs to be known here.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { build, version } from "esbuild";

const outfile = "dist/frame/frame.js";
const metafile = "dist/frame/frame.meta.json";
// Keep these options in step with bundle() in src/frame/bundle.ts (the in-memory bundle when run from the sources).
const options = {
  entryPoints: ["src/frame/browser/main.ts"],
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  outfile,
};
const stamp = JSON.stringify({ esbuild: version, options });

function current() {
  if (!existsSync(outfile) || !existsSync(metafile)) return false;
  const meta = JSON.parse(readFileSync(metafile, "utf8"));
  if (meta.stamp !== stamp) return false;
  const built = statSync(outfile).mtimeMs;
  return Object.keys(meta.inputs).every((f) => existsSync(f) && statSync(f).mtimeMs <= built);
}

if (!current()) {
  const r = await build({ ...options, metafile: true });
  writeFileSync(metafile, JSON.stringify({ stamp, inputs: r.metafile.inputs }));
}
