import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// Code used nowhere is code nobody checks (issue 35: a role check the console exported and never called): every
// name that a file under src/ exports is named again somewhere in src/, test/ or scripts/ besides its declaration.
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : /\.(ts|tsx|mjs)$/.test(n) ? [p] : [];
  });

const files = ["src", "test", "scripts"].flatMap(walk);
const texts = files.map((f) => readFileSync(f, "utf8"));
const DECLARED = /^export (?:async )?(?:function\*?|const|let|class|type|interface|enum) ([A-Za-z_$][\w$]*)/gm;

describe("no dead exports", () => {
  it("every exported function, constant, class and type of src/ is used somewhere", () => {
    const dead: string[] = [];
    for (const [i, file] of files.entries()) {
      if (!file.startsWith("src")) continue;
      for (const [, name] of texts[i]!.matchAll(DECLARED)) {
        const word = new RegExp(`(?<![\\w$])${name!.replace(/\$/g, "\\$")}(?![\\w$])`, "g");
        const uses = texts.reduce((n, t) => n + (t.match(word)?.length ?? 0), 0);
        if (uses <= 1) dead.push(`${file}: ${name}`);
      }
    }
    expect(dead, "exported and used nowhere: remove it, or use it").toEqual([]);
  });
});
