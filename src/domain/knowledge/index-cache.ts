import { stemWord, type TextLanguage } from "./language.js";
import { PassageIndex } from "./passage-index.js";
import { type Ranked, weightOf } from "./ranking.js";
import type { KnowledgeRepository, KnowledgeSourceRecord } from "./source.js";

// The in-memory indexes of the chatbots searched lately (passage-index.ts), each keyed by its chatbot's sources as
// stored (id, version, status, last change, passage count): any change to them, by this process or another sharing
// the database, makes the next search build the index again from the store. Until an index is ready, and while a
// source is being indexed (its passages change page by page), searches go to the store's full-text search instead,
// so that a search never waits for a build and never answers from passages already gone.

/** All indexes held together, in bytes (about: the passages' text and the postings); the least recently used go. */
export const INDEX_BUDGET_BYTES = 256 * 1024 * 1024;
/** A chatbot with more passages than this is searched in the store only. */
export const MAX_INDEXED_PASSAGES = 250_000;
/** Passages read from the store at a time while an index is built. */
const PAGE = 5000;
/** A question's word of at least this many letters that no passage holds is matched to a term one edit away. */
export const TYPO_MIN_LETTERS = 5;
/** A typo's correction weighs this much of the word as written. */
const TYPO_WEIGHT = 0.8;

const stampOf = (sources: KnowledgeSourceRecord[]) =>
  sources.map((s) => `${s.sourceId}:${s.version}:${s.status}:${s.updatedAt}:${s.chunkCount}`).join("|");

interface Entry {
  stamp: string;
  index?: PassageIndex;
  building?: Promise<void>;
}

const pause = () => new Promise<void>((r) => setImmediate(r));

export class PassageIndexes {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly store: Pick<KnowledgeRepository, "passages">) {}

  /**
   * The chatbot's index if it is ready for its sources as they are now; otherwise undefined, and (unless a source is
   * being indexed) a build is started for the next searches.
   */
  ready(chatbotId: string, sources: KnowledgeSourceRecord[]): PassageIndex | undefined {
    if (sources.some((s) => s.status === "indexing" || s.status === "queued")) return undefined;
    const stamp = stampOf(sources);
    const e = this.entries.get(chatbotId);
    if (e && e.stamp === stamp) {
      // Most recently used last.
      this.entries.delete(chatbotId);
      this.entries.set(chatbotId, e);
      return e.index;
    }
    if (sources.reduce((n, s) => n + s.chunkCount, 0) > MAX_INDEXED_PASSAGES) {
      this.entries.delete(chatbotId);
      return undefined;
    }
    const entry: Entry = { stamp };
    entry.building = this.build(chatbotId, entry).catch(() => {
      if (this.entries.get(chatbotId) === entry) this.entries.delete(chatbotId);
    });
    this.entries.set(chatbotId, entry);
    return undefined;
  }

  /** Waits until the chatbot's index for its sources as they are now is built (a bench's or a test's warm-up). */
  async warm(chatbotId: string, sources: KnowledgeSourceRecord[]): Promise<boolean> {
    if (this.ready(chatbotId, sources)) return true;
    await this.entries.get(chatbotId)?.building;
    return !!this.ready(chatbotId, sources);
  }

  /** Forgets a chatbot's index (its sources changed here: the next search builds it again). */
  forget(chatbotId: string): void {
    this.entries.delete(chatbotId);
  }

  private async build(chatbotId: string, entry: Entry): Promise<void> {
    await pause();
    const passages = [];
    for (let after = 0; ; after += PAGE) {
      const page = await this.store.passages(chatbotId, after, PAGE);
      passages.push(...page);
      if (page.length < PAGE || passages.length > MAX_INDEXED_PASSAGES) break;
      await pause();
    }
    if (this.entries.get(chatbotId) !== entry) return;
    const index = await PassageIndex.build(passages, pause);
    if (this.entries.get(chatbotId) !== entry) return;
    entry.index = index;
    entry.building = undefined;
    let total = 0;
    for (const e of this.entries.values()) total += e.index?.bytes ?? 0;
    // The least recently used go first (this one last).
    for (const [id, e] of this.entries) {
      if (total <= INDEX_BUDGET_BYTES) break;
      if (!e.index) continue;
      total -= e.index.bytes;
      this.entries.delete(id);
    }
  }
}

/**
 * The passages for the question's words from a chatbot's index, best first, at most `limit`: BM25F (the index's),
 * each word looked up stemmed in every language the passages are in, a word no passage holds matched to the terms
 * one edit away (a typo), and how sure (coverage: the IDF-weighted share of the words a passage holds, a word no
 * passage holds counting as the rarest).
 */
export function rankIndexed(index: PassageIndex, words: string[], limit: number): Ranked[] {
  const chunks = index.passages.length;
  const terms: { stems: { language: TextLanguage; stem: string }[]; weight: number; bit: number }[] = [];
  const weights: number[] = [];
  for (const [i, w] of words.entries()) {
    const bit = 2 ** i;
    const stems = index.languages.map((language) => ({ language, stem: stemWord(w, language) }));
    const df = Math.max(0, ...stems.map((s) => index.stats([s.stem]).df.get(s.stem) ?? 0));
    weights.push(weightOf(chunks, df));
    const typo = df === 0 ? index.typoOf(w, TYPO_MIN_LETTERS) : [];
    // A typo's correction ranks, but the agent is no surer for it: in the coverage the word stays one the
    // knowledge lacks (a guess that "printer" meant "print" must not make an off-topic question answered).
    if (typo.length > 0) terms.push({ stems: typo, weight: TYPO_WEIGHT, bit: 0 });
    else terms.push({ stems, weight: 1, bit });
  }
  const total = weights.reduce((s, x) => s + x, 0);
  return index.search(terms, limit).map((h) => {
    let held = 0;
    for (const [i, x] of weights.entries()) if (h.held & (2 ** i)) held += x;
    return { hit: h.hit, rank: h.score, coverage: total === 0 ? 0 : held / total };
  });
}
