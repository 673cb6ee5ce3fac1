import { execFile } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { scaled } from "../helpers/time-scale.js";

// `npm start` runs `npm run build` before serving: a build with nothing changed must do no compile work, and a change
// must rebuild only what it touches. The build runs in a copy of the checkout so it never races another test's dist/.
const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "aiagent-build-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const f of ["src", "gen", "scripts", "package.json", "tsconfig.json", "tsconfig.build.json"])
  cpSync(join(ROOT, f), join(dir, f), { recursive: true });
symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");

const npmBuild = () => run("npm", ["run", "build", "--silent"], { cwd: dir, timeout: scaled(150_000) });

/** Every file under dist/ with its modification time. */
function outputs(): Map<string, number> {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)],
    );
  return new Map(walk(join(dir, "dist")).map((f) => [relative(dir, f), statSync(f).mtimeMs]));
}

describe("npm run build", () => {
  it(
    "writes nothing when nothing changed, and rebuilds only what a change touches",
    async () => {
      await npmBuild();
      const first = outputs();
      expect(first.get("dist/src/cli/main.js")).toBeDefined();
      expect(first.get("dist/frame/frame.js")).toBeDefined();

      await npmBuild();
      expect(outputs()).toEqual(first);

      // A server source and the frame's script change: their outputs are rewritten, the rest is left as it was.
      appendFileSync(join(dir, "src/domain/clock.ts"), "\n// changed\n");
      const view = join(dir, "src/frame/browser/view.ts");
      writeFileSync(view, `${readFileSync(view, "utf8")}\n// changed\n`);
      await npmBuild();
      const third = outputs();
      expect(third.get("dist/src/domain/clock.js")).toBeGreaterThan(first.get("dist/src/domain/clock.js")!);
      expect(third.get("dist/frame/frame.js")).toBeGreaterThan(first.get("dist/frame/frame.js")!);
      expect(third.get("dist/src/cli/main.js")).toBe(first.get("dist/src/cli/main.js"));
      expect(readFileSync(join(dir, "dist/src/domain/clock.js"), "utf8")).toContain("// changed");
    },
    scaled(240_000),
  );
});
