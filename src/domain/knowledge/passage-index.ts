import { LANGUAGES, stemWord, type TextLanguage, termsOf } from "./language.js";
import { B, HEADING, idfOf, K1, leadOf, TITLE } from "./ranking.js";
import type { ChunkHit, TermStats } from "./source.js";

// A chatbot's passages indexed in memory (the domain's, the same on every back end): BM25F impacts precomputed per
// term and passage and each term's postings ordered by impact, so that a search reads at most MAX_POSTINGS of each
// of the question's terms (the highest-scoring ones) instead of scoring every passage that holds a word: its cost is
// bounded by the question, not by the size of the knowledge. Built from the store (KnowledgeRepository.passages) and
// kept while the chatbot's sources are unchanged (knowledge-service.ts keys it by their versions).

/** Most postings of one term read by a search: the passages where it weighs most (the others add little). */
export const MAX_POSTINGS = 1500;

/** One term's passages, highest impact first. */
interface Postings {
  ids: Uint32Array;
  impacts: Float32Array;
}

/** A candidate as the index ranks it: its BM25F score and which of the question's words it holds (bit i: word i). */
export interface IndexHit {
  hit: ChunkHit;
  score: number;
  held: number;
}

/** Optimal string alignment distance between a and b, or max + 1 as soon as it exceeds max. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let low = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur.push(v);
      if (v < low) low = v;
    }
    if (low > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length]!;
}

const key = (language: TextLanguage, stem: string) => `${language}:${stem}`;

export class PassageIndex {
  readonly passages: ChunkHit[];
  /** Passages per language (a question's word is looked up stemmed in each). */
  readonly languages: TextLanguage[];
  readonly avgLength: number;
  private readonly postings = new Map<string, Postings>();
  private readonly df = new Map<string, number>();
  /** The accumulators of a search, reused (a search runs to its end without awaiting). */
  private readonly scores: Float64Array;
  private readonly held: Uint32Array;
  /** The passages a search touched (reused: a search allocates next to nothing, so it triggers no collection). */
  private touched: Uint32Array;
  /** Each language's terms by one deletion (for typo tolerance). */
  private readonly deletions = new Map<string, string[]>();
  private readonly corrections = new Map<string, { language: TextLanguage; stem: string }[]>();
  /** Approximate bytes held (for the cache's budget). */
  readonly bytes: number;

  private constructor(passages: ChunkHit[], fields: Map<string, [number, number, number]>[], lengths: number[]) {
    this.passages = passages;
    this.languages = LANGUAGES.filter((l) => passages.some((p) => p.language === l));
    const n = passages.length;
    this.avgLength = Math.max(1, lengths.reduce((s, x) => s + x, 0) / Math.max(1, n));
    const lists = new Map<string, { ids: number[]; tf: number[] }>();
    fields.forEach((terms, id) => {
      const norm = 1 - B + (B * lengths[id]!) / this.avgLength;
      for (const [stem, [t, h, b]] of terms) {
        const k = key(passages[id]!.language, stem);
        let l = lists.get(k);
        if (!l) {
          l = { ids: [], tf: [] };
          lists.set(k, l);
        }
        l.ids.push(id);
        l.tf.push(TITLE * t + HEADING * h + b / norm);
      }
    });
    let bytes = 0;
    const impactOrdered = (l: { ids: number[]; tf: number[] }, docs: number): Postings => {
      const idf = idfOf(docs, l.ids.length);
      const order = l.ids.map((_, i) => i);
      // The passage's lead factor is in each of its impacts: their sum is its BM25F times the factor.
      const impact = l.tf.map((tf, i) => (leadOf(passages[l.ids[i]!]!.position) * idf * tf * (K1 + 1)) / (tf + K1));
      order.sort((a, b) => impact[b]! - impact[a]! || l.ids[a]! - l.ids[b]!);
      bytes += 8 * l.ids.length + 64;
      return { ids: Uint32Array.from(order, (i) => l.ids[i]!), impacts: Float32Array.from(order, (i) => impact[i]!) };
    };
    for (const [k, l] of lists) {
      this.postings.set(k, impactOrdered(l, n));
      this.df.set(k, l.ids.length);
    }
    for (const p of passages) bytes += 2 * (p.text.length + p.title.length + p.headingPath.length + p.anchorUrl.length);
    this.scores = new Float64Array(n);
    this.held = new Uint32Array(n);
    this.touched = new Uint32Array(Math.min(n, 4 * MAX_POSTINGS));
    // Each term under itself less each letter (typo tolerance, typoOf).
    for (const k of this.df.keys()) {
      const at = k.indexOf(":");
      const [l, stem] = [k.slice(0, at), k.slice(at + 1)];
      if (stem.length < TYPO_MIN_STEM || /\d/.test(stem)) continue;
      for (const d of [stem, ...dels(stem)]) {
        const dk = `${l}:${d}`;
        const list = this.deletions.get(dk);
        if (list) list.push(k);
        else this.deletions.set(dk, [k]);
        bytes += 2 * dk.length + 40;
      }
    }
    this.bytes = bytes + 12 * n;
  }

  /** Indexes passages, yielding to the event loop every few hundred (`pause`) so that serving goes on meanwhile. */
  static async build(passages: ChunkHit[], pause: () => Promise<void> = async () => {}): Promise<PassageIndex> {
    const fields: Map<string, [number, number, number]>[] = [];
    const lengths: number[] = [];
    for (const [i, p] of passages.entries()) {
      if (i % 500 === 499) await pause();
      const m = new Map<string, [number, number, number]>();
      const add = (terms: string[], f: 0 | 1 | 2) => {
        for (const t of terms) {
          let v = m.get(t);
          if (!v) {
            v = [0, 0, 0];
            m.set(t, v);
          }
          v[f]++;
        }
      };
      add(termsOf(p.title, p.language), 0);
      add(termsOf(p.headingPath, p.language), 1);
      const body = termsOf(p.text, p.language);
      add(body, 2);
      fields.push(m);
      lengths.push(body.length);
    }
    return new PassageIndex(passages, fields, lengths);
  }

  /** The passage count and each stem's document frequency (the largest over the languages), as termStats answers. */
  stats(stems: string[]): TermStats {
    const df = new Map<string, number>();
    for (const s of stems)
      for (const l of this.languages) {
        const n = this.df.get(key(l, s));
        if (n && n > (df.get(s) ?? 0)) df.set(s, n);
      }
    return { chunks: this.passages.length, df };
  }

  /** Whether some passage holds the word (stemmed in its language). */
  has(word: string): boolean {
    return this.languages.some((l) => this.df.has(key(l, stemWord(word, l))));
  }

  /**
   * The term of the chatbot's vocabulary a word not in it may be a typo of: one edit (an insertion, deletion,
   * substitution or swap of two neighbours) away from its stem, or its stem once two of its letters are swapped or
   * one left out; the most frequent such term (none for words under `minLength` letters). Found by deletions (each
   * term indexed under itself less one letter), never by comparing every term.
   */
  typoOf(word: string, minLength: number): { language: TextLanguage; stem: string }[] {
    if (word.length < minLength) return [];
    const cached = this.corrections.get(word);
    if (cached) return cached;
    const out: { language: TextLanguage; stem: string; df: number }[] = [];
    const seen = new Set<string>();
    for (const l of this.languages) {
      const stem = stemWord(word, l);
      for (const d of [stem, ...dels(stem)])
        for (const k of this.deletions.get(`${l}:${d}`) ?? []) {
          if (seen.has(k)) continue;
          seen.add(k);
          const t = k.slice(k.indexOf(":") + 1);
          if (t !== stem && editDistance(stem, t, 1) <= 1) out.push({ language: l, stem: t, df: this.df.get(k)! });
        }
    }
    // The word as written with one letter left out or two swapped, stemmed (a typo may change how a word stems).
    if (word.length <= 16)
      for (const variant of variants(word))
        for (const l of this.languages) {
          const k = key(l, stemWord(variant, l));
          if (seen.has(k)) continue;
          seen.add(k);
          const df = this.df.get(k);
          if (df) out.push({ language: l, stem: k.slice(k.indexOf(":") + 1), df });
        }
    out.sort((a, b) => b.df - a.df);
    const best = out.slice(0, TYPO_CORRECTIONS).map(({ language, stem }) => ({ language, stem }));
    if (this.corrections.size > 10_000) this.corrections.clear();
    this.corrections.set(word, best);
    return best;
  }

  /**
   * The passages best for the question's terms by BM25F, at most `limit`: each term given as the stems it is looked
   * up under (per language) and a weight (1 for a word as written, less for a typo's correction). Reads at most
   * MAX_POSTINGS of each term's postings, highest impact first.
   */
  search(
    terms: { stems: { language: TextLanguage; stem: string }[]; weight: number; bit: number }[],
    limit: number,
  ): IndexHit[] {
    const { scores, held } = this;
    let touched = this.touched;
    let count = 0;
    for (const t of terms)
      for (const { language, stem } of t.stems) {
        const p = this.postings.get(key(language, stem));
        if (!p) continue;
        const n = Math.min(p.ids.length, MAX_POSTINGS);
        for (let i = 0; i < n; i++) {
          const id = p.ids[i]!;
          if (scores[id] === 0 && held[id] === 0) {
            if (count === touched.length) {
              const grown = new Uint32Array(Math.min(this.passages.length, 2 * touched.length));
              grown.set(touched);
              this.touched = touched = grown;
            }
            touched[count++] = id;
          }
          scores[id]! += t.weight * p.impacts[i]!;
          held[id]! |= t.bit;
        }
      }
    const best = topIds(touched, count, scores, limit);
    const out = best.map((id) => ({ hit: this.passages[id]!, score: scores[id]!, held: held[id]! }));
    for (let i = 0; i < count; i++) {
      scores[touched[i]!] = 0;
      held[touched[i]!] = 0;
    }
    return out;
  }
}

/** Most terms a word not in the vocabulary is taken for (the most frequent first). */
const TYPO_CORRECTIONS = 1;
/** Terms shorter than this are not corrected to (a question's word is corrected from TYPO_MIN_LETTERS letters). */
const TYPO_MIN_STEM = 4;

/** A word with one letter left out, or two neighbours swapped. */
function variants(w: string): string[] {
  const out = dels(w);
  for (let i = 0; i + 1 < w.length; i++) out.push(w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2));
  return out;
}

/** A word less one letter, each way. */
function dels(w: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < w.length; i++) out.push(w.slice(0, i) + w.slice(i + 1));
  return out;
}

/** The `limit` ids of highest score (ties: the lower id), best first, without sorting them all. */
function topIds(ids: Uint32Array, count: number, scores: Float64Array, limit: number): number[] {
  const better = (a: number, b: number) => scores[a]! > scores[b]! || (scores[a] === scores[b] && a < b);
  const heap: number[] = [];
  for (let k = 0; k < count; k++) {
    const id = ids[k]!;
    if (heap.length < limit) {
      heap.push(id);
      let i = heap.length - 1;
      while (i > 0) {
        const up = (i - 1) >> 1;
        if (!better(heap[up]!, heap[i]!)) break;
        const x = heap[up]!;
        heap[up] = heap[i]!;
        heap[i] = x;
        i = up;
      }
    } else if (scores[id]! >= scores[heap[0]!]! && better(id, heap[0]!)) {
      heap[0] = id;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let w = i;
        if (l < heap.length && better(heap[w]!, heap[l]!)) w = l;
        if (r < heap.length && better(heap[w]!, heap[r]!)) w = r;
        if (w === i) break;
        const x = heap[w]!;
        heap[w] = heap[i]!;
        heap[i] = x;
        i = w;
      }
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}
