import type { TextLanguage } from "../domain/knowledge/language.js";
import { LANGUAGES, stemWord, termsOf } from "../domain/knowledge/language.js";
import type {
  ChunkHit,
  ChunkInput,
  KnowledgeSourceRecord,
  SourceKind,
  SourceStatus,
} from "../domain/knowledge/source.js";

/** A row of `knowledge_sources` (without its content). */
export interface KnowledgeSourceRow {
  source_id: string;
  account_id: string;
  chatbot_id: string;
  kind: string;
  title: string;
  url: string;
  file_name: string;
  media_type: string;
  status: string;
  status_reason: string;
  page_count: number | string;
  chunk_count: number | string;
  content_hash: string;
  version: number | string;
  max_pages: number | string;
  max_depth: number | string;
  resync_interval_hours: number | string;
  created_at: number | string;
  updated_at: number | string;
  indexed_at: number | string | null;
}

export const SOURCE_COLUMNS =
  "source_id, account_id, chatbot_id, kind, title, url, file_name, media_type, status, status_reason, page_count, " +
  "chunk_count, content_hash, version, max_pages, max_depth, resync_interval_hours, created_at, updated_at, indexed_at";

export const toSource = (r: KnowledgeSourceRow): KnowledgeSourceRecord => ({
  sourceId: r.source_id,
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  kind: r.kind as SourceKind,
  title: r.title,
  url: r.url,
  fileName: r.file_name,
  mediaType: r.media_type,
  status: r.status as SourceStatus,
  statusReason: r.status_reason,
  pageCount: Number(r.page_count),
  chunkCount: Number(r.chunk_count),
  contentHash: r.content_hash,
  version: Number(r.version),
  maxPages: Number(r.max_pages),
  maxDepth: Number(r.max_depth),
  resyncIntervalHours: Number(r.resync_interval_hours),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  indexedAt: r.indexed_at === null ? null : Number(r.indexed_at),
});

/** The values of SOURCE_COLUMNS, in order. */
export const sourceValues = (s: KnowledgeSourceRecord) => [
  s.sourceId,
  s.accountId,
  s.chatbotId,
  s.kind,
  s.title,
  s.url,
  s.fileName,
  s.mediaType,
  s.status,
  s.statusReason,
  s.pageCount,
  s.chunkCount,
  s.contentHash,
  s.version,
  s.maxPages,
  s.maxDepth,
  s.resyncIntervalHours,
  s.createdAt,
  s.updatedAt,
  s.indexedAt,
];

/** A row of `knowledge_chunks` as a search reads it. */
export interface ChunkRow {
  source_id: string;
  page_url: string;
  title: string;
  anchor_url: string;
  heading_path: string;
  text: string;
  language: string;
  position: number | string;
  rank: number | string;
}

export const CHUNK_COLUMNS = "source_id, page_url, title, anchor_url, heading_path, text, language, position";

export const toHit = (r: ChunkRow): ChunkHit => ({
  sourceId: r.source_id,
  pageUrl: r.page_url,
  title: r.title,
  anchorUrl: r.anchor_url,
  headingPath: r.heading_path,
  text: r.text,
  language: r.language as TextLanguage,
  position: Number(r.position),
  rank: Number(r.rank),
});

/** The text a passage is indexed under: its page title, headings and body. */
export const indexedText = (c: Pick<ChunkInput, "title" | "headingPath" | "text">) =>
  `${c.title}\n${c.headingPath}\n${c.text}`;

/**
 * The term that marks a chatbot's passages in an index shared by all chatbots (SQLite FTS5): letters and digits that
 * no stemmed word is, so that a search intersects with it inside the index instead of reading every match's row.
 */
export const chatbotTerm = (chatbotId: string) => `zzchatbot${chatbotId.replace(/[^0-9a-zA-Z]/g, "").toLowerCase()}`;

/** A passage's terms for an index that does not stem by itself (SQLite FTS5): stemmed in its language, and its chatbot's. */
export const indexedTerms = (c: ChunkInput, chatbotId: string) =>
  `${chatbotTerm(chatbotId)} ${termsOf(indexedText(c), c.language).join(" ")}`;

/** The distinct terms a passage is counted under in knowledge_terms (those of indexedTerms). */
export const distinctTerms = (c: Pick<ChunkInput, "title" | "headingPath" | "text" | "language">) =>
  new Set(termsOf(indexedText(c), c.language));

/**
 * Adds `sign` (1 for passages written, -1 for passages removed) to each term's count of the passages (and to the
 * passage count, term ''), into `into`.
 */
export function countTerms(
  chunks: Pick<ChunkInput, "title" | "headingPath" | "text" | "language">[],
  sign: 1 | -1,
  into: Map<string, number>,
): Map<string, number> {
  for (const c of chunks) {
    into.set("", (into.get("") ?? 0) + sign);
    for (const t of distinctTerms(c)) into.set(t, (into.get(t) ?? 0) + sign);
  }
  return into;
}

/** A row of knowledge_chunks as counted (its indexed text). */
export interface CountedRow {
  title: string;
  heading_path: string;
  text: string;
  language: string;
}

export const countedChunk = (r: CountedRow) => ({
  title: r.title,
  headingPath: r.heading_path,
  text: r.text,
  language: r.language as TextLanguage,
});

/** An embedding as stored (float32, little-endian). */
export const vectorBytes = (v: Float32Array | undefined): Buffer | null =>
  v ? Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)) : null;

export function vectorOf(b: Uint8Array): Float32Array {
  const copy = new Uint8Array(b);
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
}

/** Cosine similarity of two vectors (0 when either is all zeros or their lengths differ). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** The `limit` best of scored items (a bounded selection, best first). */
export function topBy<T>(items: Iterable<T>, score: (x: T) => number, limit: number): { x: T; s: number }[] {
  const out: { x: T; s: number }[] = [];
  for (const x of items) {
    const s = score(x);
    if (out.length === limit && s <= out[out.length - 1]!.s) continue;
    let i = out.length;
    while (i > 0 && out[i - 1]!.s < s) i--;
    out.splice(i, 0, { x, s });
    if (out.length > limit) out.pop();
  }
  return out;
}

/** A question's words stemmed as each language would (the passages are stemmed in their own), without repeats. */
export function queryStems(words: string[]): string[] {
  const out = new Set<string>();
  for (const w of words) for (const l of LANGUAGES) out.add(stemWord(w, l));
  return [...out];
}
