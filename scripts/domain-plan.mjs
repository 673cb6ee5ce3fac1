// The domain's plan, read from its imports: each room (a folder of src/domain, or a file on its ground floor) with
// the rooms it imports, and every import that runs against the plan of docs/architecture.md. Fails (exit 1) on an
// import circle between files of src/domain, or on a domain file that imports the store aggregate (store.ts).
// Run: node scripts/domain-plan.mjs
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const DOMAIN = join(dirname(fileURLToPath(import.meta.url)), "../src/domain");

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const files = sources(DOMAIN).map((f) => relative(DOMAIN, f));
const known = new Set(files);
/** Each file's imports of other domain files (static ones, types included). */
const imports = new Map(
  files.map((f) => {
    const text = readFileSync(join(DOMAIN, f), "utf8");
    const targets = [...text.matchAll(/(?:from\s+|import\s*\(\s*)["'](\.[^"']+)["']/g)]
      .map((m) => normalize(join(dirname(f), m[1])).replace(/\.js$/, ".ts"))
      .filter((t) => known.has(t));
    return [f, [...new Set(targets)]];
  }),
);
const room = (f) => (f.includes("/") ? `${f.split("/")[0]}/` : f);

const arrows = new Map();
for (const [f, ts] of imports)
  for (const t of ts)
    if (room(f) !== room(t)) {
      const key = `${room(f)} -> ${room(t)}`;
      arrows.set(key, (arrows.get(key) ?? 0) + 1);
    }
const rooms = [...new Set(files.map(room))].sort();
console.log("rooms and what each imports (the number: imports between their files):");
for (const r of rooms) {
  const out = [...arrows].filter(([k]) => k.startsWith(`${r} -> `)).map(([k, n]) => `${k.split(" -> ")[1]} ${n}`);
  console.log(`  ${r.padEnd(16)} ${out.join(", ") || "-"}`);
}

const problems = [];
for (const [f, ts] of imports)
  if (f !== "store.ts" && ts.includes("store.ts"))
    problems.push(`${f} imports store.ts (name the repositories instead)`);

// File-level circles (Tarjan's strongly connected components).
let next = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
function visit(v) {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of imports.get(v)) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const circle = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      circle.push(w);
    } while (w !== v);
    if (circle.length > 1) problems.push(`an import circle: ${circle.sort().join(", ")}`);
  }
}
for (const f of files) if (!index.has(f)) visit(f);

for (const p of problems) console.log(`NOT TO PLAN: ${p}`);
if (problems.length > 0) process.exit(1);
console.log(`${files.length} files in ${rooms.length} rooms, no import circle, no domain file imports store.ts`);
