import { describe, expect, it } from "vitest";
import { acceptedLanguages, chooseLocale, LOCALES } from "../../src/domain/account/languages.js";
import { CATALOGUES } from "../../src/frame/i18n/catalogue.js";

// Issue 46, item 3: every string of the frame in every language, with the same placeholders as the English one.

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("the frame's catalogues", () => {
  for (const locale of LOCALES) {
    it(`${locale} has every text, none empty, with English's placeholders`, () => {
      for (const part of ["page", "script"] as const) {
        const en = CATALOGUES.en[part] as unknown as Record<string, string>;
        const own = CATALOGUES[locale][part] as unknown as Record<string, string>;
        expect(Object.keys(own).sort()).toEqual(Object.keys(en).sort());
        for (const [key, text] of Object.entries(en)) {
          expect(own[key]!.trim(), `${locale}.${part}.${key}`).not.toBe("");
          expect(placeholders(own[key]!), `${locale}.${part}.${key}`).toEqual(placeholders(text));
          // No markup: the page writes them into its HTML as they are.
          expect(own[key], `${locale}.${part}.${key}`).not.toMatch(/[<>&"]/);
        }
      }
    });
  }
  it("are translated: no language but English shows English's sentences", () => {
    for (const locale of LOCALES.filter((l) => l !== "en"))
      for (const key of ["offline", "closed", "placeholder"] as const) {
        const part = key === "placeholder" ? "page" : "script";
        const own = (CATALOGUES[locale][part] as unknown as Record<string, string>)[key];
        expect(own, `${locale}.${key}`).not.toBe((CATALOGUES.en[part] as unknown as Record<string, string>)[key]);
      }
  });
});

describe("choosing the language", () => {
  it("reads Accept-Language by weight and order, ignoring q=0 and junk", () => {
    expect(acceptedLanguages("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5")).toEqual(["fr-CH", "fr", "en", "de", "*"]);
    expect(acceptedLanguages("de;q=0, es;q=0.1, ar")).toEqual(["ar", "es"]);
    expect(acceptedLanguages(undefined)).toEqual([]);
    expect(chooseLocale(undefined, acceptedLanguages(";;;,,,q=de"), "")).toBe("en");
  });
  it("takes the page's option, then the browser's, then the chatbot's default, then English", () => {
    expect(chooseLocale("de-CH", ["fr"], "es")).toBe("de");
    expect(chooseLocale(undefined, ["ja", "fr-CA"], "es")).toBe("fr");
    expect(chooseLocale("ja", ["ko"], "es")).toBe("es");
    expect(chooseLocale(undefined, [], "")).toBe("en");
    expect(chooseLocale("<x>", ["*"], "xx")).toBe("en");
  });
});
