// Bundles the browser scripts (the chat frame's dist/frame/frame.js, the host script's dist/embed/v1.js, the console's
// dist/console/console.js), each only
// when one of its inputs (or the build options) changed since its last bundle: esbuild's metafile lists the inputs,
// so nothing else needs to be known here. `node scripts/build-frame.mjs frame` (or `embed`) builds one;
// the host script is also bundled as an ES module for the package's `aiagent/embed` export.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { build, version } from "esbuild";

// Keep these options in step with bundle() and FRAME_BUILD in src/frame/bundle.ts and src/frame/embed-script.ts (the in-memory
// bundles when run from the sources).
const common = {
  bundle: true,
  format: "iife",
  target: "es2020",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
};
const bundles = {
  // The frame's script, split (FRAME_BUILD in src/frame/bundle.ts): frame.js and the chunks it loads on demand.
  frame: {
    entryPoints: ["src/frame/browser/main.ts"],
    outfile: "dist/frame/frame.js",
    split: {
      format: "esm",
      splitting: true,
      outdir: "dist/frame",
      entryNames: "frame",
      chunkNames: "[name]-[hash]",
      target: "es2022",
    },
  },
  embed: { entryPoints: ["src/embed/global.ts"], outfile: "dist/embed/v1.js" },
  // The same host script as an ES module, the package's `aiagent/embed` export.
  "embed-module": { entryPoints: ["src/embed/mount.ts"], outfile: "dist/embed/mount.js", format: "esm" },
  // The web console (Preact); keep in step with CONSOLE_BUILD in src/console/bundle.ts.
  console: {
    entryPoints: ["src/console/browser/main.tsx"],
    outfile: "dist/console/console.js",
    jsx: "automatic",
    jsxImportSource: "preact",
  },
};

function current(outfile, metafile, stamp) {
  if (!existsSync(outfile) || !existsSync(metafile)) return false;
  const meta = JSON.parse(readFileSync(metafile, "utf8"));
  if (meta.stamp !== stamp) return false;
  const built = statSync(outfile).mtimeMs;
  return Object.keys(meta.inputs).every((f) => existsSync(f) && statSync(f).mtimeMs <= built);
}

const wanted = process.argv.slice(2);
for (const [name, b] of Object.entries(bundles)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const { outfile, split, ...rest } = b;
  // A split bundle is written to a directory (its entry is still `outfile`).
  const options = split ? { ...common, ...rest, ...split } : { ...common, ...rest, outfile };
  const metafile = outfile.replace(/\.js$/, ".meta.json");
  const stamp = JSON.stringify({ esbuild: version, options });
  if (current(outfile, metafile, stamp)) continue;
  const r = await build({ ...options, metafile: true });
  // The server serves every script of a split bundle's directory: the chunks of earlier builds are removed.
  const outputs = Object.keys(r.metafile.outputs).map((f) => basename(f));
  if (split)
    for (const f of readdirSync(split.outdir))
      if (f.endsWith(".js") && !outputs.includes(f)) rmSync(join(split.outdir, f));
  writeFileSync(metafile, JSON.stringify({ stamp, inputs: r.metafile.inputs }));
}
