import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEFAULT_APPEARANCE } from "../../src/domain/account/appearance.js";
import { LOCALES } from "../../src/domain/account/languages.js";
import { FRAME_ENTRY, frameFiles } from "../../src/frame/bundle.js";
import { CATALOGUES } from "../../src/frame/i18n/catalogue.js";
import { scriptStrings } from "../../src/frame/page.js";

// The frame loads inside every customer's page: its script stays small (docs/inbox.md states its size before and
// after each change). The budget is what a customer downloads before the first paint: the module the page loads
// (frame.js, minified, gzipped) and any chunk it imports statically. What is loaded on demand (sending files, the
// e-mail prompt, the rating) has a budget of its own.
const BUDGET_GZIPPED = 9 * 1024;
const ON_DEMAND_BUDGET_GZIPPED = 2048;
const gzipped = (js: string) => gzipSync(Buffer.from(js), { level: 9 }).length;
/** The chunks a module imports statically (`import … from "./x.js"` or `import "./x.js"`). */
const staticImports = (js: string) =>
  [...js.matchAll(/\bimport\s*(?:[^("'`]*?from\s*)?["']\.\/([^"']+)["']/g)].map((m) => m[1]!);
// What the one language in use adds to the frame's page (issue 46): its script's words, as JSON, gzipped.
// 1,280 until the e-mail prompt's eight texts (Arabic 1,203 -> 1,378 bytes); 1,408 until the agent's "looking up"
// line (Arabic 1,378 -> 1,418 bytes).
const CATALOGUE_BUDGET_GZIPPED = 1440;

describe("the frame's script", () => {
  it(`is at most ${BUDGET_GZIPPED} bytes gzipped for the first paint, the rest loaded on demand`, async () => {
    const files = await frameFiles();
    const first = new Set<string>();
    const visit = (name: string) => {
      if (first.has(name)) return;
      first.add(name);
      for (const next of staticImports(files.get(name)!)) visit(next);
    };
    visit(FRAME_ENTRY);
    // Each file is its own download, gzipped on its own.
    const firstPaint = [...first].reduce((n, name) => n + gzipped(files.get(name)!), 0);
    expect(firstPaint).toBeLessThanOrEqual(BUDGET_GZIPPED);
    // Sending a file, the e-mail prompt and the rating are chunks of their own, which frame.js imports when first needed.
    const onDemand = [...files.keys()].filter((name) => !first.has(name));
    expect(onDemand.map((name) => name.replace(/-[A-Z0-9]+\.js$/, "")).sort()).toEqual([
      "attach-send",
      "mail-prompt",
      "rating",
    ]);
    const rest = onDemand.reduce((n, name) => n + gzipped(files.get(name)!), 0);
    expect(rest).toBeLessThanOrEqual(ON_DEMAND_BUDGET_GZIPPED);
  });

  it("carries no language's words: they come with the page, one language at a time", async () => {
    const js = [...(await frameFiles()).values()].join("\n");
    for (const locale of LOCALES)
      for (const key of ["offline", "closed", "commentPlaceholder"] as const)
        expect(js).not.toContain(CATALOGUES[locale].script[key]);
  });

  it(`adds at most ${CATALOGUE_BUDGET_GZIPPED} bytes gzipped for the language in use, in each language`, () => {
    for (const locale of LOCALES) {
      const json = Buffer.from(JSON.stringify(scriptStrings({ appearance: DEFAULT_APPEARANCE, locale })));
      expect(gzipSync(json, { level: 9 }).length, locale).toBeLessThanOrEqual(CATALOGUE_BUDGET_GZIPPED);
    }
  });
});
