// Combining marks of the diacritic blocks (Latin, Greek and Cyrillic accents, their supplements and half marks).
// Marks of other scripts stay: an Indic vowel sign or a Thai tone mark is part of the letter to its readers.
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
// Latin letters whose accent Unicode does not decompose (a stroke or a ligature): their base letters, as a reader
// of those languages would type them on a keyboard without them.
const UNDECOMPOSED: Record<string, string> = { ł: "l", ø: "o", đ: "d", ħ: "h", ŧ: "t", æ: "ae", œ: "oe" };
const UNDECOMPOSED_RE = new RegExp(`[${Object.keys(UNDECOMPOSED).join("")}]`, "g");
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, U+0000 included, on purpose
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The one folding of contact search, applied to the stored search text when a contact is written and to the
 * query when it is asked, on every storage back end (the folded text is computed here and stored, never by SQL):
 * compatibility decomposition (NFKD: ﬁ → fi, ² → 2, full-width → ASCII), accents removed (É → E, ö → o),
 * full case folding (upper- then lower-case: ß → ss, İ → i, final ς → σ), the stroked letters and ligatures
 * Unicode does not decompose (ł → l, ø → o, æ → ae), recomposed (NFC: Hangul syllables).
 */
export function foldForSearch(text: string): string {
  // ASCII is its own decomposition and has no accents, and its only case pairs are A–Z/a–z: the chain below
  // would only lower-case it (the common case: an empty search, most e-mail addresses, ids and phone numbers).
  if (ASCII.test(text)) return text.toLowerCase();
  return text
    .normalize("NFKD")
    .replace(DIACRITICS, "")
    .toUpperCase()
    .toLowerCase()
    .replace(/ς/g, "σ")
    .replace(UNDECOMPOSED_RE, (c) => UNDECOMPOSED[c]!)
    .normalize("NFKD")
    .replace(DIACRITICS, "")
    .normalize("NFC");
}

/** Separates the fields of the stored search text; a search term cannot contain it (control characters are refused). */
export const SEARCH_FIELD_SEPARATOR = "\u001f";

/** The stored search text of a contact: its four searchable fields folded, so one substring test covers all four. */
export function contactSearchText(c: {
  userId: string;
  contactName: string;
  email: string;
  phoneNumber: string;
}): string {
  return [c.userId, c.contactName, c.email, c.phoneNumber].map(foldForSearch).join(SEARCH_FIELD_SEPARATOR);
}
