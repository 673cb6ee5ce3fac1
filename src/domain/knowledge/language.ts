import { stemmer as english } from "@orama/stemmers/english";
import { stemmer as french } from "@orama/stemmers/french";
import { stemmer as german } from "@orama/stemmers/german";
import { stemmer as spanish } from "@orama/stemmers/spanish";

/** The languages stemmed (PostgreSQL's text search configuration names); `simple` only lower-cases. */
export type TextLanguage = "english" | "german" | "french" | "spanish" | "simple";

/** The customer-facing languages of the built-in agent's own sentences. */
export type Locale = "en" | "de" | "fr" | "es";

export const LANGUAGES: readonly TextLanguage[] = ["english", "german", "french", "spanish", "simple"];

const words = (s: string) => new Set(s.split(" "));

/** Each language's most frequent function words: what is not searched for, and what tells the language apart. */
export const STOP_WORDS: Record<Exclude<TextLanguage, "simple">, Set<string>> = {
  english: words(
    "the a an and or of to in is are am be been i you my your it its for on with do does did how what when where why which who can could me we our us this that these those there at by from as was were has have had will would not no yes if so but about into than then them they their he she his her any some all more most also just get got should may might must shall please much many want need know tell like thanks thank hello hi still yet ever way anything something",
  ),
  german: words(
    "der die das den dem des ein eine einer einen einem eines und oder ist sind bin bist war waren wird werden wurde ich du er sie es wir ihr mein meine meinen mich mir dich dir sich uns euch nicht kein keine mit von zu zum zur im in an am auf aus bei für über unter nach vor wie was wo wann warum welche welcher welches wer kann können könnte muss müssen soll sollte darf habe hast hat haben hatte auch nur noch schon aber wenn dass als ob bitte man denn doch ja nein sehr",
  ),
  french: words(
    "le la les un une des du de d l et ou est sont suis es sommes êtes été être je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses notre nos votre vos leur leurs ce cet cette ces qui que quoi quand où comment pourquoi quel quelle quels quelles ne pas plus avec pour par sur dans en au aux a ai as avons avez ont peux peut pouvez puis-je dois doit faut se si mais aussi très bien oui non y c qu j m n s t",
  ),
  spanish: words(
    "el la los las un una unos unas y o es son soy eres somos estoy está están estar ser de del al a en con por para sin sobre yo tú él ella nosotros vosotros ellos ellas mi mis tu tus su sus nuestro nuestra qué que cómo como cuándo cuando dónde donde por qué porque cuál cuáles quién no sí se me te le lo nos les muy más pero también puedo puede pueden debo hay ha he has han tengo tiene este esta estos estas ese esa",
  ),
};

/** A stemmer that remembers its answers (a search stems the same words of its candidate passages again and again). */
function remembered(stem: (w: string) => string): (w: string) => string {
  const seen = new Map<string, string>();
  return (w) => {
    let s = seen.get(w);
    if (s === undefined) {
      if (seen.size >= 200_000) seen.clear();
      s = stem(w);
      seen.set(w, s);
    }
    return s;
  };
}

const STEMMERS: Record<TextLanguage, (w: string) => string> = {
  english: remembered(english),
  german: remembered(german),
  french: remembered(french),
  spanish: remembered(spanish),
  simple: (w) => w,
};

/** Words of a text: lower-cased runs of letters and digits (an apostrophe or hyphen splits). */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Letters that only some of the four languages use: a strong hint on short texts. */
const MARKS: [RegExp, Exclude<TextLanguage, "simple">][] = [
  [/[äöüß]/, "german"],
  [/[ñ¿¡]/, "spanish"],
  [/[àâçèêëîïôœùû]/, "french"],
];

/**
 * The language of a text among English, German, French and Spanish, by its function words (and the letters only
 * one of them uses); `simple` when none is clearly there (a few words, another language, code).
 */
export function detectLanguage(text: string): TextLanguage {
  const ws = wordsOf(text.slice(0, 20_000));
  const score: Record<string, number> = { english: 0, german: 0, french: 0, spanish: 0 };
  for (const w of ws) for (const [lang, stop] of Object.entries(STOP_WORDS)) if (stop.has(w)) score[lang]! += 1;
  const lower = text.slice(0, 20_000).toLowerCase();
  for (const [re, lang] of MARKS) if (re.test(lower)) score[lang]! += 1.5;
  const ranked = Object.entries(score).sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (!best || best[1] < 1 || best[1] === second![1]) return "simple";
  return best[0] as TextLanguage;
}

/** The locale of a customer's question (English unless it is clearly German, French or Spanish). */
export function detectLocale(question: string): Locale {
  const l = detectLanguage(question);
  return l === "german" ? "de" : l === "french" ? "fr" : l === "spanish" ? "es" : "en";
}

/** The terms of a text as indexed and searched in `language`: its words without stop words, stemmed. */
export function termsOf(text: string, language: TextLanguage): string[] {
  const stem = STEMMERS[language];
  const stop = language === "simple" ? undefined : STOP_WORDS[language];
  const out: string[] = [];
  for (const w of wordsOf(text)) {
    if (stop?.has(w) || w.length > 64) continue;
    out.push(stem(w));
  }
  return out;
}

/** The words of a question worth searching for: no stop word of any of the four languages, no duplicates. */
export function queryWords(question: string): string[] {
  const out = new Set<string>();
  for (const w of wordsOf(question)) {
    if (w.length > 64) continue;
    if (Object.values(STOP_WORDS).some((s) => s.has(w))) continue;
    out.add(w);
  }
  return [...out].slice(0, 32);
}

/** One word stemmed in `language`. */
export function stemWord(word: string, language: TextLanguage): string {
  return STEMMERS[language](word);
}
