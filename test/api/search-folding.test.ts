import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { foldForSearch } from "../../src/domain/conversation/search-fold.js";
import { serverForFile } from "../helpers/file-server.js";
import { contacts, issueTokens, send } from "../helpers/flows.js";

// Search ignores case and accents over Unicode, at write time and at query time alike. The reference shares no code
// with the service: an explicit table of letters with their accented forms (each one code point, in either case),
// and the decision whether a name contains a term comes from ICU's collator at base strength (accents and case
// ignored) over a sliding window, not from any folding function.
const ACCENTED: Record<string, string> = {
  a: "àáâãäåāăą",
  c: "çćĉċč",
  d: "ďđ",
  e: "èéêëēĕėęě",
  g: "ĝğġģ",
  i: "ìíîïĩīĭį",
  l: "ĺļľł",
  n: "ñńņň",
  o: "òóôõöōŏőø",
  r: "ŕŗř",
  s: "śŝşš",
  u: "ùúûüũūŭůűų",
  y: "ýÿŷ",
  z: "źżž",
};
const BASE = Object.keys(ACCENTED);
const base = new Intl.Collator("und", { sensitivity: "base" });

/** Does `text` contain `term`, ignoring case and accents? (ICU, one window per start position.) */
function referenceContains(text: string, term: string): boolean {
  for (let i = 0; i + term.length <= text.length; i++)
    if (base.compare(text.slice(i, i + term.length), term) === 0) return true;
  return false;
}

/** A base-letter word dressed with random accents and case: every letter shown in any of its forms. */
const dressed = (word: string) =>
  fc
    .tuple(...[...word].map((ch) => fc.tuple(fc.constantFrom(ch, ...(ACCENTED[ch] ?? ch)), fc.boolean())))
    .map((letters) => letters.map(([ch, upper]) => (upper ? ch.toUpperCase() : ch)).join(""));
const baseWord = (min: number, max: number) =>
  fc.array(fc.constantFrom(...BASE), { minLength: min, maxLength: max }).map((cs) => cs.join(""));

const fx = serverForFile({ idTokens: true });
const people: { userId: string; name: string }[] = [];

async function found(search: string): Promise<string[]> {
  const r = await contacts(fx.s.url, fx.idA, fx.a.email, { search, limit: 100 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return (r.body.data.data.contacts as { contact_name: string }[]).map((c) => c.contact_name).sort();
}

beforeAll(async () => {
  const fixed = ["ÉMILE Zola", "Ösel Ärnberg", "Łukasz Żółć", "Straße Müller", "İlknur Çağlar", "ΟΔΥΣΣΕΥΣ Ιθάκης"];
  const random = fc.sample(
    fc.tuple(baseWord(3, 8), baseWord(3, 8)).chain(([w1, w2]) => fc.tuple(dressed(w1), dressed(w2))),
    { numRuns: 24, seed: 18 },
  );
  const names = [...fixed, ...random.map(([f, l]) => `${f} ${l}`)];
  for (const [i, name] of names.entries()) {
    // Digits only, so a term of letters can only ever match the name.
    const userId = String(1000 + i);
    const t = await issueTokens(fx.s.url, fx.a, userId, { contact_name: name });
    await send(fx.s.url, t.access_token, "hello");
    people.push({ userId, name });
  }
});

describe("search folds case and accents over Unicode", () => {
  it("the reference table is what ICU says: every accented form, in either case, is its base letter", () => {
    for (const [b, forms] of Object.entries(ACCENTED))
      for (const f of forms) {
        expect(base.compare(f, b), f).toBe(0);
        expect(base.compare(f.toUpperCase(), b), f.toUpperCase()).toBe(0);
      }
  });

  it("finds names typed exactly, without accents, in any case", async () => {
    for (const term of ["ÉMILE", "émile", "emile", "EMILE", "zola"])
      expect(await found(term), term).toEqual(["ÉMILE Zola"]);
    for (const term of ["Ösel", "ösel", "osel", "ÄRN", "arnberg"])
      expect(await found(term), term).toEqual(["Ösel Ärnberg"]);
    for (const term of ["lukasz", "ŁUKASZ", "zolc", "żółć"]) expect(await found(term), term).toEqual(["Łukasz Żółć"]);
    // Full case folding: ß is ss, İ is i, a final sigma is a sigma.
    for (const term of ["strasse", "STRASSE", "straße", "muller"])
      expect(await found(term), term).toEqual(["Straße Müller"]);
    for (const term of ["ilknur", "İLKNUR", "caglar"]) expect(await found(term), term).toEqual(["İlknur Çağlar"]);
    for (const term of ["οδυσσευς", "ΟΔΥΣΣΕΥΣ", "οδυσσευσ", "ιθακ"])
      expect(await found(term), term).toEqual(["ΟΔΥΣΣΕΥΣ Ιθάκης"]);
  });

  it("a term ending in a sigma finds a name where the word goes on (final ς is σ on both sides)", async () => {
    // Lower-casing makes a sigma that ends the typed term final (ς) while the stored name goes on with σ.
    for (const term of ["οδυσ", "ΟΔΥΣ", "ΟΔΥΣΣ", "Οδυσσ"]) expect(await found(term), term).toEqual(["ΟΔΥΣΣΕΥΣ Ιθάκης"]);
  });

  it("any piece of any name, dressed in any accents and case, finds exactly the names ICU says contain it", async () => {
    const random = people.slice(6);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // A piece of a stored name, in base letters, then dressed anew.
          fc
            .tuple(fc.constantFrom(...random), fc.nat(), fc.integer({ min: 1, max: 6 }))
            .map(([p, start, len]) => {
              const plain = p.name.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
              const from = start % plain.length;
              return [...plain.slice(from, from + len).toLowerCase()].filter((c) => BASE.includes(c)).join("");
            })
            .filter((w) => w.length > 0)
            .chain(dressed),
          // Any word of the table's letters: mostly found nowhere.
          baseWord(1, 5).chain(dressed),
        ),
        async (term) => {
          const expected = people
            .filter((p) => referenceContains(p.name, term) || referenceContains(p.userId, term))
            .map((p) => p.name)
            .sort();
          expect(await found(term), term).toEqual(expected);
        },
      ),
      { numRuns: 150, seed: 18 },
    );
  });

  it("ASCII folds to its lower case, and one accented letter among ASCII still loses its accent", () => {
    // The general chain of the folding, for ASCII: decomposition and recomposition change nothing, case folds.
    const chain = (t: string) => t.normalize("NFKD").toUpperCase().toLowerCase().normalize("NFC");
    for (let c = 0; c < 128; c++)
      expect(foldForSearch(String.fromCharCode(c)), `U+${c}`).toBe(chain(String.fromCharCode(c)));
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 40 }), (t) => {
        expect(foldForSearch(t)).toBe(chain(t));
      }),
      { numRuns: 300, seed: 23 },
    );
    expect(foldForSearch("ZOË Smith")).toBe("zoe smith");
    expect(foldForSearch("STRASSE straße")).toBe("strasse strasse");
  });
});
