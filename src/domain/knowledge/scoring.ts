import { queryWords, stemWord, type TextLanguage, termsOf, wordsOf } from "./language.js";

/** A passage scoring below this is never answered from (the agent says it does not know). */
export const ANSWER_THRESHOLD = 0.5;

/** A passage found for a question, with where it came from (a citation's provenance). */
export interface Passage {
  /** "" for the chatbot's own knowledge list. */
  sourceId: string;
  sourceTitle: string;
  /** The page's title (a snippet's title). */
  title: string;
  pageUrl: string;
  anchorUrl: string;
  headingPath: string;
  text: string;
  excerpt: string;
  /** 0 to 1 (scoring.ts). */
  score: number;
  /** The source's version (0 for the knowledge list). */
  knowledgeVersion: number;
}

/** A passage as scored: its words and the language they are stemmed in. */
export interface ScoredText {
  title: string;
  headingPath: string;
  text: string;
  language: TextLanguage;
}

/**
 * How well a passage answers a question, 0 to 1: the share of the question's content words (stop words of English,
 * German, French and Spanish left out) the passage holds, stemmed in the passage's language or as written. It is
 * the same on every back end (the databases' BM25 ranks are not comparable between them), so one threshold decides
 * when the agent says it does not know.
 */
export function passageScore(question: string | string[], p: ScoredText): number {
  const words = typeof question === "string" ? queryWords(question) : question;
  if (words.length === 0) return 0;
  return scoreAgainst(words, scoredTerms(p), p.language);
}

/** What passageScore matches a question's words against: the passage's terms and its words as written. */
export function scoredTerms(p: ScoredText): Set<string> {
  const body = `${p.title} ${p.headingPath} ${p.text}`;
  return new Set([...termsOf(body, p.language), ...wordsOf(body)]);
}

/** passageScore of a passage whose scoredTerms are known, for a question's words (queryWords). */
export function scoreAgainst(words: string[], terms: Set<string>, language: TextLanguage): number {
  if (words.length === 0) return 0;
  let hit = 0;
  for (const w of words) if (terms.has(w) || terms.has(stemWord(w, language))) hit++;
  return hit / words.length;
}

/** The lines of a passage that hold most of the question's words, at most `max` characters (its start otherwise). */
export function excerptOf(question: string, text: string, language: TextLanguage, max = 300): string {
  const words = queryWords(question).map((w) => stemWord(w, language));
  const lines = text
    .split(/\n+|(?<=[.!?])\s+/)
    .map((l) => l.trim())
    .filter(Boolean);
  let best = 0;
  let bestHits = -1;
  lines.forEach((l, i) => {
    const t = new Set(termsOf(l, language));
    const hits = words.filter((w) => t.has(w)).length;
    if (hits > bestHits) {
      best = i;
      bestHits = hits;
    }
  });
  let out = "";
  for (const l of lines.slice(best)) {
    if (out && out.length + l.length + 1 > max) break;
    out = out ? `${out} ${l}` : l;
  }
  return out.length > max ? `${out.slice(0, max - 1).trimEnd()}…` : out;
}
