import type { TextLanguage } from "./language.js";

/** What a knowledge source is made from. */
export type SourceKind = "file" | "page" | "site" | "snippets";

/** Where a source stands: waiting, being indexed, answered from, or not indexed with a reason. */
export type SourceStatus = "queued" | "indexing" | "indexed" | "failed";

/** A knowledge source of a chatbot, as stored (its file's bytes or snippets are kept apart: `content`). */
export interface KnowledgeSourceRecord {
  sourceId: string;
  accountId: string;
  chatbotId: string;
  kind: SourceKind;
  /** Given, else the document's own once extracted. */
  title: string;
  /** page and site: the address given. */
  url: string;
  fileName: string;
  mediaType: string;
  status: SourceStatus;
  statusReason: string;
  pageCount: number;
  chunkCount: number;
  /** SHA-256 (hex) of the indexed pages' hashes, "" before the first indexing. */
  contentHash: string;
  /** 0 before the first indexing, then one more each time the content changes. */
  version: number;
  maxPages: number;
  maxDepth: number;
  /** page and site: hours between scheduled re-syncs (0: only on demand). */
  resyncIntervalHours: number;
  createdAt: number;
  updatedAt: number;
  /** null until indexed once. */
  indexedAt: number | null;
}

/** A passage to index: one part of a page, under its headings. */
export interface ChunkInput {
  /** The page's title. */
  title: string;
  /** The page's address with the anchor of the passage's heading where it has one. */
  anchorUrl: string;
  /** Headings, outermost first, joined by " > ". */
  headingPath: string;
  /** The passage (Markdown). */
  text: string;
  /** The language it is stemmed in. */
  language: TextLanguage;
  /** Its position in its page. */
  position: number;
  /** Its embedding, when an embeddings endpoint is configured. */
  vector?: Float32Array | undefined;
}

/** A passage of a source as found by a search, with the back end's own rank (higher is better). */
export interface ChunkHit extends ChunkInput {
  sourceId: string;
  pageUrl: string;
  rank: number;
}

/** How a chunk is searched: the question's words (the back end stems them in each chunk's language). */
export interface ChunkQuery {
  chatbotId: string;
  words: string[];
  limit: number;
}

/** A chatbot's passage count, and how many of its passages hold each of some stemmed terms (absent: none). */
export interface TermStats {
  chunks: number;
  df: Map<string, number>;
}

/** How passages near an embedding are found: the chatbot's passages with a vector, most similar (cosine) first. */
export interface VectorQuery {
  chatbotId: string;
  vector: Float32Array;
  limit: number;
}

/** Makes embeddings of texts (an OpenAI-compatible /v1/embeddings endpoint), one vector per text, in order. */
export interface Embedder {
  /** What the vectors are made by (its model): pages indexed by another are embedded again on their next resync. */
  readonly id: string;
  embed(texts: string[], signal: AbortSignal): Promise<Float32Array[]>;
}

/** The status change a step of indexing records. */
export interface SourceProgress {
  status: SourceStatus;
  statusReason?: string;
  title?: string;
  mediaType?: string;
  pageCount?: number;
  chunkCount?: number;
  contentHash?: string;
  version?: number;
  indexedAt?: number;
  updatedAt: number;
}

/** Storage of knowledge sources, their pages and their passages (with a full-text index, BM25-ranked). */
export interface KnowledgeRepository {
  /** Adds a source with what it is made from (a file's bytes, the snippets' JSON; empty for page and site). */
  addSource(s: KnowledgeSourceRecord, content: Uint8Array): Promise<void>;
  getSource(chatbotId: string, sourceId: string): Promise<KnowledgeSourceRecord | undefined>;
  /** A chatbot's sources, oldest first, at most `limit`. */
  listSources(chatbotId: string, limit: number): Promise<KnowledgeSourceRecord[]>;
  /** What the source was made from (as given to addSource); undefined once it is gone. */
  content(sourceId: string): Promise<Uint8Array | undefined>;
  /** Sources still to index (queued, or indexing when a process stopped), oldest first. */
  pending(limit: number): Promise<{ sourceId: string; chatbotId: string }[]>;
  /**
   * Sources whose scheduled re-sync is due at `now`: an interval set, indexed or failed, and that many hours passed
   * since their status last changed (updated_at); oldest first, at most `limit`.
   */
  dueForResync(now: number, limit: number): Promise<{ sourceId: string; chatbotId: string }[]>;
  /** Sets a source's re-sync interval; false when the chatbot has no such source. */
  setResyncInterval(chatbotId: string, sourceId: string, hours: number): Promise<boolean>;
  /** Records a step; false when the source is gone. */
  progress(sourceId: string, p: SourceProgress): Promise<boolean>;
  /** Each indexed page of the source and its content hash. */
  pageHashes(sourceId: string): Promise<Map<string, string>>;
  /**
   * Replaces one page's passages (and its hash) in one unit of work; false when the source is gone (nothing is
   * written then).
   */
  replacePage(
    source: { sourceId: string; chatbotId: string },
    pageUrl: string,
    hash: string,
    chunks: ChunkInput[],
  ): Promise<boolean>;
  /** Removes the source's pages (and their passages) not in `keep`. */
  keepPages(sourceId: string, keep: string[]): Promise<void>;
  /** The source's passage count. */
  chunkCount(sourceId: string): Promise<number>;
  /**
   * Moves a source (its passages dropped already: keepPages) from one chatbot key to another and queues it to be
   * indexed again; false when there is no such source under `from`.
   */
  moveSource(sourceId: string, from: string, to: string, now: number): Promise<boolean>;
  /** Removes a source with its pages and passages; false when there was none. */
  removeSource(chatbotId: string, sourceId: string): Promise<boolean>;
  /** The chatbot's passages holding any of the words, best first by BM25 (SQLite FTS5, PostgreSQL ts_rank). */
  search(q: ChunkQuery): Promise<ChunkHit[]>;
  /**
   * The chatbot's passages in the order they were stored, at most `limit` after the `after`-th (paging from 0): what
   * the domain's in-memory index of a chatbot is built from (passage-index.ts). Their rank is 0.
   */
  passages(chatbotId: string, after: number, limit: number): Promise<ChunkHit[]>;
  /** The chatbot's passage count and the document frequency of each term (stemmed as indexed). */
  termStats(chatbotId: string, terms: string[]): Promise<TermStats>;
  /** The chatbot's passages with an embedding, most similar to the vector first (rank: the cosine similarity). */
  nearest(q: VectorQuery): Promise<ChunkHit[]>;
}
