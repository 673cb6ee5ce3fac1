import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { DEFAULT_APPEARANCE } from "../../src/domain/account/appearance.js";
import { LOCALES } from "../../src/domain/account/languages.js";
import { frameScript } from "../../src/frame/bundle.js";
import { CATALOGUES } from "../../src/frame/i18n/catalogue.js";
import { scriptStrings } from "../../src/frame/page.js";

// The frame loads inside every customer's page: its script stays small (docs/inbox.md states its size before and
// after each change). The budget is what a customer downloads: the minified bundle, gzipped.
const BUDGET_GZIPPED = 9 * 1024;
// What the one language in use adds to the frame's page (issue 46): its script's words, as JSON, gzipped.
// 1,280 until the e-mail prompt's eight texts (Arabic 1,203 -> 1,378 bytes).
const CATALOGUE_BUDGET_GZIPPED = 1408;

describe("the frame's script", () => {
  it(`is at most ${BUDGET_GZIPPED} bytes gzipped`, async () => {
    const js = Buffer.from(await frameScript());
    expect(gzipSync(js, { level: 9 }).length).toBeLessThanOrEqual(BUDGET_GZIPPED);
  });

  it("carries no language's words: they come with the page, one language at a time", async () => {
    const js = await frameScript();
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
