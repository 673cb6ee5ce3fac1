import { LANGUAGES, stemWord, type TextLanguage, termsOf } from "./language.js";
import type { ChunkHit, TermStats } from "./source.js";

// How the passages a store found for a question are ranked and how sure the agent is of each, the same on every
// back end: BM25F over the passage's fields (its page title and headings weigh more than its body), with each
// word's IDF taken from the chatbot's own passage counts (knowledge_terms), and the IDF-weighted share of the
// question's words a passage holds as its score (0 to 1), on which the answer floor is set. No vocabulary of any
// one business or document set.

/** BM25's term-frequency saturation and length normalisation. */
export const K1 = 1.2;
export const B = 0.75;
/** A word in the page's title counts as this many in the body; in a heading, HEADING. */
export const TITLE = 3;
export const HEADING = 2;

/**
 * How much more a passage counts at the head of its page: its BM25F is multiplied by 1 + LEAD / (1 + its position),
 * so the first passage counts 1.2 times, the second 1.1, the tenth 1.02. A page's first passages say what it is
 * about (its summary, its description), later ones the details; chosen on the retrieval bench's tune half (0.1, 0.2,
 * 0.5, 1 tried) and checked on its held-out half (docs/knowledge.md).
 */
export const LEAD = 0.2;

/** The factor of a passage's BM25F for its position in its page (LEAD). */
export const leadOf = (position: number) => 1 + LEAD / (1 + Math.max(0, position));

/** A word's IDF (BM25's, never below 0): how rare it is among the chatbot's passages. */
export const idfOf = (chunks: number, df: number) => Math.log(1 + (chunks - df + 0.5) / (df + 0.5));

/**
 * Passages assumed beside the chatbot's own, none holding the word, when a word's weight in the coverage score is
 * taken: with a few passages every word is rare and IDF says little (a word the knowledge lacks would outweigh all
 * the others), with many it is IDF as usual.
 */
const PRIOR_PASSAGES = 100;

/** A word's weight in the coverage score. */
export const weightOf = (chunks: number, df: number) => Math.log(1 + (chunks + PRIOR_PASSAGES) / (df + 0.5));

/** The stems of the words in every language a passage may be indexed in (what termStats is asked for). */
export function stemsOfWords(words: string[]): string[] {
  const out = new Set<string>();
  for (const w of words) for (const l of LANGUAGES) out.add(stemWord(w, l));
  return [...out];
}

/**
 * A word held by more than this share of the passages, or by more than COMMON_COUNT of them, is not searched for when
 * rarer ones are (it is still ranked by).
 */
const COMMON_SHARE = 0.1;
const COMMON_COUNT = 2000;
/** Below this many passages holding it, no word is common (a small knowledge base is cheap to search). */
const RARE_COUNT = 200;

/**
 * The words the store's full-text search is asked for: those not common (above), or the two rarest when all are. BM25 gives a common word little weight anyway, and matching it would make
 * the store score most of the passages (the cost of a search over 100,000 of them); the ranking still counts it.
 */
export function searchedWords(words: string[], stats: TermStats): string[] {
  if (stats.chunks === 0) return words;
  const df = (w: string) => Math.max(...LANGUAGES.map((l) => stats.df.get(stemWord(w, l)) ?? 0));
  const most = Math.max(RARE_COUNT, Math.min(COMMON_SHARE * stats.chunks, COMMON_COUNT));
  const rare = words.filter((w) => df(w) <= most);
  if (rare.length > 0) return rare;
  return [...words].sort((a, b) => df(a) - df(b)).slice(0, 2);
}

export interface Ranked {
  hit: ChunkHit;
  /** BM25F times its lead factor (leadOf): the order. */
  rank: number;
  /** The IDF-weighted share of the question's words the passage holds, 0 to 1: how sure. */
  coverage: number;
}

const count = (terms: string[]) => {
  const m = new Map<string, number>();
  for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
};

/** The hits ranked for the question's words (queryWords), best first (`all`: those holding none of them too). */
export function rankHits(words: string[], hits: ChunkHit[], stats: TermStats, all = false): Ranked[] {
  if (words.length === 0 || hits.length === 0) return [];
  const fields = hits.map((h) => {
    const body = termsOf(h.text, h.language);
    return {
      title: count(termsOf(h.title, h.language)),
      heading: count(termsOf(h.headingPath, h.language)),
      body: count(body),
      length: body.length,
    };
  });
  const avg = Math.max(1, fields.reduce((n, f) => n + f.length, 0) / fields.length);
  // Counts missing (passages indexed before they were kept) are at least what the candidates themselves show.
  const chunks = Math.max(stats.chunks, hits.length);
  const cache = new Map<string, { idf: number; weight: number }>();
  const idf = (stem: string, language: TextLanguage) => {
    const key = `${language}:${stem}`;
    let v = cache.get(key);
    if (v === undefined) {
      const seen = fields.filter(
        (f, i) => hits[i]!.language === language && (f.title.has(stem) || f.heading.has(stem) || f.body.has(stem)),
      ).length;
      const df = Math.max(stats.df.get(stem) ?? 0, seen);
      v = { idf: idfOf(chunks, df), weight: weightOf(chunks, df) };
      cache.set(key, v);
    }
    return v;
  };
  return hits
    .map((hit, i) => {
      const f = fields[i]!;
      const norm = 1 - B + (B * f.length) / avg;
      let rank = 0;
      let held = 0;
      let total = 0;
      for (const w of words) {
        const stem = stemWord(w, hit.language);
        const x = idf(stem, hit.language);
        total += x.weight;
        const tf =
          TITLE * (f.title.get(stem) ?? 0) + HEADING * (f.heading.get(stem) ?? 0) + (f.body.get(stem) ?? 0) / norm;
        if (tf === 0) continue;
        held += x.weight;
        rank += (x.idf * tf * (K1 + 1)) / (tf + K1);
      }
      return { hit, rank: rank * leadOf(hit.position), coverage: total === 0 ? 0 : held / total, i };
    })
    .filter((r) => all || r.rank > 0)
    .sort((a, b) => b.rank - a.rank || a.i - b.i)
    .map(({ i: _, ...r }) => r);
}

/** Reciprocal rank fusion's constant (Cormack et al.): a passage's fused score is the sum of 1 / (RRF_K + rank). */
const RRF_K = 60;

const keyOf = (h: ChunkHit) => `${h.sourceId}\n${h.pageUrl}\n${h.position}`;

/**
 * The BM25 ranking merged with the passages nearest the question's embedding (`near`, most similar first; their
 * rank is the cosine similarity) by reciprocal rank fusion. How sure a passage is: its IDF-weighted coverage or its
 * similarity, whichever is higher (a question in another language than the passage holds none of its words).
 */
export function fuse(ranked: Ranked[], near: ChunkHit[], words: string[], stats: TermStats): Ranked[] {
  if (near.length === 0) return ranked;
  const fused = new Map<string, { r: Ranked; score: number }>();
  for (const [i, r] of ranked.entries()) fused.set(keyOf(r.hit), { r, score: 1 / (RRF_K + i + 1) });
  const lexical = new Map(rankHits(words, near, stats, true).map((r) => [keyOf(r.hit), r.coverage]));
  near.forEach((h, i) => {
    const k = keyOf(h);
    const sure = Math.max(lexical.get(k) ?? 0, h.rank);
    const f = fused.get(k);
    if (f) {
      f.score += 1 / (RRF_K + i + 1);
      f.r = { ...f.r, coverage: Math.max(f.r.coverage, sure) };
    } else fused.set(k, { r: { hit: h, rank: 0, coverage: sure }, score: 1 / (RRF_K + i + 1) });
  });
  return [...fused.values()].sort((a, b) => b.score - a.score).map((f) => f.r);
}
