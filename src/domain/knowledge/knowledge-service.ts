import { createHash } from "node:crypto";
import { requireKnowledge } from "../account/chatbot-rules.js";
import type { ChatbotRecord, KnowledgeSnippet } from "../account/repository.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { optionalText } from "../validate.js";
import { chunkPage, type ExtractedPage } from "./chunking.js";
import { PassageIndexes, rankIndexed } from "./index-cache.js";
import { queryWords, type TextLanguage } from "./language.js";
import { scoreSnippets } from "./matching.js";
import { fuse, type Ranked, rankHits, searchedWords, stemsOfWords } from "./ranking.js";
import { ANSWER_THRESHOLD, excerptOf, type Passage } from "./scoring.js";

export { ANSWER_THRESHOLD, type Passage } from "./scoring.js";

import type {
  ChunkHit,
  ChunkInput,
  Embedder,
  KnowledgeRepository,
  KnowledgeSourceRecord,
  SourceKind,
  TermStats,
} from "./source.js";

/** Largest uploaded file. */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** How many passages the store's full-text search gives for the domain to rank (ranking.ts). */
const CANDIDATES = 60;
/** Longest a question's embedding may take before the search goes on with BM25 alone, ms. */
const QUERY_EMBED_MS = 3000;
/** Most sources per chatbot. */
export const MAX_SOURCES = 200;
/** Site crawls: default and most pages, default and most depth. */
export const SITE_PAGES = { default: 50, max: 500 };
export const SITE_DEPTH = { default: 2, max: 5 };
/** Scheduled re-syncs of a page or site: the most hours between two (0: only on demand). */
export const MAX_RESYNC_INTERVAL_HOURS = 720;
/** How often the indexer looks for sources due for their scheduled re-sync. */
export const RESYNC_CHECK_MS = 60_000;
/** A search of the knowledge (SearchKnowledge): the question's length, and the passages answered. */
export const SEARCH_QUERY_MAX = 500;
export const SEARCH_LIMIT = { default: 5, max: 20 };

/**
 * What a draft of a chatbot's agent searches instead of the live knowledge: the chatbot's sources but those it leaves
 * out, and the sources added to the draft only, stored under the draft's own knowledge key.
 */
export interface KnowledgeView {
  leftOut: readonly string[];
  draftKey: string;
}

/**
 * A chatbot's knowledge sources as one reply read them at its start (KnowledgeService.sourcesFor): the chatbot's, and
 * with a draft's view the draft's own. The reply's searches take them from here instead of reading them again.
 */
export interface ReplySources {
  live: KnowledgeSourceRecord[];
  /** The draft's own sources (with a view only). */
  draft?: KnowledgeSourceRecord[];
  /** Whether there is any source to search: a draft's own, or a live one the view does not leave out. */
  any: boolean;
}

/** A chatbot's live knowledge sources as a reply reads them (KnowledgeService.sourcesFor without a view), from `knowledge`. */
export async function liveSourcesIn(
  knowledge: Pick<KnowledgeRepository, "listSources">,
  chatbotId: string,
): Promise<ReplySources> {
  const live = await knowledge.listSources(chatbotId, MAX_SOURCES);
  return { live, any: live.length > 0 };
}

/** What a search of a chatbot's knowledge finds, and whether the built-in agent would answer from it. */
export interface KnowledgeSearchResult {
  /** Best first, those below the threshold included. */
  passages: Passage[];
  /** The first passage reaches the threshold: the built-in agent answers from it (else it says it does not know). */
  answers: boolean;
  threshold: number;
}

/** Indexing failed for a reason the source's owner can act on (the message is shown as the status reason). */
export class KnowledgeFailure extends Error {
  override readonly name = "KnowledgeFailure";
}

/** Reads what sources are made from: files, pages and sites (fetching through the SSRF guard, off the event loop). */
export interface KnowledgeReader {
  /** A file's pages (one for most formats) and what it was read as; throws KnowledgeFailure when it cannot be. */
  file(
    bytes: Uint8Array,
    fileName: string,
    signal: AbortSignal,
  ): Promise<{ mediaType: string; pages: ExtractedPage[] }>;
  /** One web page. */
  page(url: string, signal: AbortSignal): Promise<ExtractedPage>;
  /** A site's pages: a sitemap's, or those linked from a start page on the same origin, honouring robots.txt. */
  site(url: string, o: { maxPages: number; maxDepth: number }, signal: AbortSignal): AsyncIterable<ExtractedPage>;
}

/** What an admin gives to add a source. */
export interface SourceInput {
  kind: string;
  title: string;
  fileName: string;
  content: Uint8Array;
  url: string;
  maxPages: number;
  maxDepth: number;
  snippets: KnowledgeSnippet[];
  /** page and site: hours between scheduled re-syncs (0: only on demand). */
  resyncIntervalHours?: number;
}

const KIND: readonly SourceKind[] = ["file", "page", "site", "snippets"];

function webUrl(field: string, raw: string): string {
  if (!raw) throw invalidArgument(field, "is required");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalidArgument(field, `${JSON.stringify(raw)} is not an absolute URL`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw invalidArgument(field, "must be an http or https URL");
  if (u.username || u.password) throw invalidArgument(field, "must not contain a user name or password");
  u.hash = "";
  return u.toString();
}

function intIn(field: string, v: number, d: { default: number; max: number }, min: number): number {
  if (v === 0) return d.default;
  if (!Number.isInteger(v) || v < min || v > d.max) throw invalidArgument(field, `must be ${min} to ${d.max}`);
  return v;
}

/** A re-sync interval as given: page and site sources only, 0 to MAX_RESYNC_INTERVAL_HOURS. */
function resyncInterval(kind: SourceKind, hours: number): number {
  if (hours === 0) return 0;
  if (kind !== "page" && kind !== "site")
    throw invalidArgument("resync_interval_hours", "is only for kinds page and site");
  if (!Number.isInteger(hours) || hours < 0 || hours > MAX_RESYNC_INTERVAL_HOURS)
    throw invalidArgument(
      "resync_interval_hours",
      `must be 0 to ${MAX_RESYNC_INTERVAL_HOURS} hours (0: only on demand)`,
    );
  return hours;
}

const sha256 = (s: string | Uint8Array) => createHash("sha256").update(s).digest("hex");

/** The address of a file's own pages (a file has no web address: citations link nowhere). */
export const fileUrl = (sourceId: string) => `knowledge:${sourceId}`;

/**
 * A chatbot's knowledge sources: admins add, resync and remove them, the built-in agent (and any tool) searches
 * them. Indexing runs in the background, one source at a time per process (and one process at a time on a shared
 * store), from the persisted queue: a source queued or interrupted while indexing is picked up again on start.
 */
export class KnowledgeService {
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private again = false;
  private readonly stop = new AbortController();
  /** The chatbots' passages indexed in memory (index-cache.ts); the store's full-text search until one is ready. */
  private readonly indexes: PassageIndexes;

  constructor(
    private readonly d: {
      knowledge: KnowledgeRepository;
      clock: Clock;
      /** The caller's chatbot (another account's is not_found). */
      chatbotOf: (caller: AccountCaller, chatbotId: string) => Promise<ChatbotRecord>;
      /** A chatbot by id, for searches (undefined when gone). */
      chatbotById: (chatbotId: string) => Promise<ChatbotRecord | undefined>;
      reader: KnowledgeReader;
      /** Runs fn unless another process runs the indexer now (store.exclusive). */
      exclusive: <T>(name: string, fn: () => Promise<T>) => Promise<T | undefined>;
      /** Told of an unexpected indexing error (for the log). */
      onError?: (sourceId: string, e: unknown) => void;
      /** Checks a page or site address when it is given (production: it must resolve to public addresses). */
      checkUrl?: (field: string, url: string) => Promise<void>;
      /** An embeddings endpoint: passages get vectors, searches merge them with BM25 (reciprocal rank fusion). */
      embedder?: Embedder | undefined;
      /** Told when the embeddings endpoint failed (passages are then indexed and searched by BM25 alone). */
      onEmbeddingError?: (e: unknown) => void;
    },
  ) {
    this.indexes = new PassageIndexes(d.knowledge);
  }

  /**
   * Builds the chatbot's in-memory index now and waits for it (a search otherwise starts the build and is answered
   * by the store meanwhile); false when the chatbot is searched in the store only (too many passages, or a source
   * being indexed).
   */
  async warm(chatbotId: string): Promise<boolean> {
    return this.indexes.warm(chatbotId, await this.d.knowledge.listSources(chatbotId, MAX_SOURCES));
  }

  /** Adds a source, queued; indexing starts in the background. */
  async create(caller: AccountCaller, chatbotId: string, input: SourceInput): Promise<KnowledgeSourceRecord> {
    return this.add(caller, chatbotId, input, (id) => id);
  }

  /**
   * Adds a source to the chatbot's agent draft only: stored and indexed under the draft's knowledge key
   * (draftKnowledgeKey), which no customer's search reads; a replay's draft side searches it (KnowledgeView).
   */
  async createDraftSource(
    caller: AccountCaller,
    chatbotId: string,
    input: SourceInput,
    keyOf: (chatbotId: string) => string,
  ): Promise<KnowledgeSourceRecord> {
    return this.add(caller, chatbotId, input, keyOf);
  }

  /** The sources stored under a knowledge key (a chatbot's id, or its draft's key), oldest first. */
  sourcesOf(key: string): Promise<KnowledgeSourceRecord[]> {
    return this.d.knowledge.listSources(key, MAX_SOURCES);
  }

  /** Removes a source stored under a knowledge key with its passages; false when there was none. */
  removeSourceOf(key: string, sourceId: string): Promise<boolean> {
    return this.d.knowledge.removeSource(key, sourceId);
  }

  /**
   * Moves a source from one knowledge key to another (a draft's source goes live): its passages are dropped and it
   * is queued, to be indexed again under its new key (a page or site is fetched again).
   */
  async moveSource(sourceId: string, from: string, to: string): Promise<boolean> {
    await this.d.knowledge.keepPages(sourceId, []);
    if (!(await this.d.knowledge.moveSource(sourceId, from, to, this.d.clock.now()))) return false;
    this.kick();
    return true;
  }

  private async add(
    caller: AccountCaller,
    chatbotId: string,
    input: SourceInput,
    keyOf: (chatbotId: string) => string,
  ): Promise<KnowledgeSourceRecord> {
    // Bad input is refused before any lookup, naming its field.
    if (input.content.length > 0 && input.kind !== "file")
      throw invalidArgument("content", "is only for kind file (with file_name)");
    if (!KIND.includes(input.kind as SourceKind))
      throw invalidArgument("kind", input.kind ? "must be file, page, site or snippets" : "is required");
    const kind = input.kind as SourceKind;
    const title = optionalText("title", input.title.trim());
    let content: Uint8Array = new Uint8Array();
    let url = "";
    let fileName = "";
    let maxPages = 0;
    let maxDepth = 0;
    if (kind === "file") {
      fileName = optionalText("file_name", input.fileName.trim());
      if (!fileName) throw invalidArgument("file_name", "is required with kind file (e.g. manual.pdf)");
      if (input.content.length === 0) throw invalidArgument("content", "is required with kind file: the file's bytes");
      if (input.content.length > MAX_FILE_BYTES)
        throw invalidArgument(
          "content",
          `is ${input.content.length} bytes; a file may have at most ${MAX_FILE_BYTES} (8 MiB)`,
        );
      content = input.content;
    } else if (input.content.length > 0) throw invalidArgument("content", "is only for kind file");
    if (kind === "page" || kind === "site") {
      url = webUrl("url", input.url);
    } else if (input.url) throw invalidArgument("url", "is only for kinds page and site");
    if (kind === "site") {
      maxPages = intIn("max_pages", input.maxPages, SITE_PAGES, 1);
      maxDepth = intIn("max_depth", input.maxDepth, SITE_DEPTH, 1);
    } else if (input.maxPages || input.maxDepth) throw invalidArgument("max_pages", "is only for kind site");
    const resyncIntervalHours = resyncInterval(kind, input.resyncIntervalHours ?? 0);
    if (kind === "snippets") {
      const snippets = requireKnowledge("snippets", input.snippets);
      if (snippets.length === 0) throw invalidArgument("snippets", "at least one is required with kind snippets");
      content = new TextEncoder().encode(JSON.stringify(snippets));
    } else if (input.snippets.length > 0) throw invalidArgument("snippets", "is only for kind snippets");
    if (url) await this.d.checkUrl?.("url", url);
    const chatbot = await this.d.chatbotOf(caller, chatbotId);
    const key = keyOf(chatbot.chatbotId);
    if ((await this.d.knowledge.listSources(key, MAX_SOURCES + 1)).length >= MAX_SOURCES)
      throw new DomainError("resource_exhausted", `a chatbot has at most ${MAX_SOURCES} knowledge sources`);
    const now = this.d.clock.now();
    const s: KnowledgeSourceRecord = {
      sourceId: newId(),
      accountId: chatbot.accountId,
      chatbotId: key,
      kind,
      title: title || fileName || (url ? new URL(url).host : "Snippets"),
      url,
      fileName,
      mediaType: "",
      status: "queued",
      statusReason: "",
      pageCount: 0,
      chunkCount: 0,
      contentHash: "",
      version: 0,
      maxPages,
      maxDepth,
      resyncIntervalHours,
      createdAt: now,
      updatedAt: now,
      indexedAt: null,
    };
    await this.d.knowledge.addSource(s, content);
    this.kick();
    return s;
  }

  async list(caller: AccountCaller, chatbotId: string): Promise<KnowledgeSourceRecord[]> {
    const chatbot = await this.d.chatbotOf(caller, chatbotId);
    return this.d.knowledge.listSources(chatbot.chatbotId, MAX_SOURCES);
  }

  async get(caller: AccountCaller, chatbotId: string, sourceId: string): Promise<KnowledgeSourceRecord> {
    const chatbot = await this.d.chatbotOf(caller, chatbotId);
    const id = requireUuid("source_id", sourceId);
    const s = await this.d.knowledge.getSource(chatbot.chatbotId, id);
    if (!s) throw notFound(`knowledge source ${id}`);
    return s;
  }

  /** Removes the source and its passages (a search after this never finds them). */
  async remove(caller: AccountCaller, chatbotId: string, sourceId: string): Promise<void> {
    const chatbot = await this.d.chatbotOf(caller, chatbotId);
    const id = requireUuid("source_id", sourceId);
    if (!(await this.d.knowledge.removeSource(chatbot.chatbotId, id))) throw notFound(`knowledge source ${id}`);
  }

  /** Sets a page or site source's re-sync schedule (hours, 0: only on demand). */
  async update(
    caller: AccountCaller,
    chatbotId: string,
    sourceId: string,
    change: { resyncIntervalHours: number },
  ): Promise<KnowledgeSourceRecord> {
    const s = await this.get(caller, chatbotId, sourceId);
    const hours = resyncInterval(s.kind, change.resyncIntervalHours);
    if (!(await this.d.knowledge.setResyncInterval(s.chatbotId, s.sourceId, hours)))
      throw notFound(`knowledge source ${s.sourceId}`);
    return { ...s, resyncIntervalHours: hours };
  }

  /** Queues the source again (unchanged pages are not indexed again). */
  async resync(caller: AccountCaller, chatbotId: string, sourceId: string): Promise<KnowledgeSourceRecord> {
    const s = await this.get(caller, chatbotId, sourceId);
    if (s.status === "queued" || s.status === "indexing") return s;
    const updatedAt = this.d.clock.now();
    await this.d.knowledge.progress(s.sourceId, { status: "queued", statusReason: "", updatedAt });
    this.kick();
    return { ...s, status: "queued", statusReason: "", updatedAt };
  }

  /**
   * What the caller's chatbot's knowledge answers to a question (SearchKnowledge): the passages as the agents find
   * them (searchKnowledge), near misses below the threshold included, and whether the built-in agent would answer.
   * Another account's chatbot is not_found, like a missing one; nothing is stored.
   */
  async search(
    caller: AccountCaller,
    chatbotId: string,
    query: string,
    limit: number | undefined,
  ): Promise<KnowledgeSearchResult> {
    const q = query.trim();
    if (!q) throw invalidArgument("query", "is required: the question, as a customer would ask it");
    if (q.length > SEARCH_QUERY_MAX) throw invalidArgument("query", `must be at most ${SEARCH_QUERY_MAX} characters`);
    const n = limit ?? SEARCH_LIMIT.default;
    if (!Number.isInteger(n) || n < 1 || n > SEARCH_LIMIT.max)
      throw invalidArgument("limit", `must be 1 to ${SEARCH_LIMIT.max} (${SEARCH_LIMIT.default} when left out)`);
    const chatbot = await this.d.chatbotOf(caller, chatbotId);
    const passages = await this.searchKnowledge(chatbot.chatbotId, q, n, { chatbot, minScore: Number.MIN_VALUE });
    const [best] = passages;
    return { passages, answers: !!best && best.score >= ANSWER_THRESHOLD, threshold: ANSWER_THRESHOLD };
  }

  /**
   * The chatbot's passages for a question, best first, at most `limit`, each scored 0 to 1 and with its
   * provenance: the indexed sources' passages (BM25 in the store picks the candidates) and the chatbot's own
   * knowledge list. Passages below `minScore` (default ANSWER_THRESHOLD) are left out: an empty answer means the
   * knowledge does not answer the question. The domain function the agents (and a search_knowledge tool) call.
   */
  async searchKnowledge(
    chatbotId: string,
    query: string,
    limit: number,
    o: {
      minScore?: number;
      chatbot?: ChatbotRecord;
      view?: KnowledgeView | undefined;
      /** The sources as the reply read them (sourcesFor, with the same view); else they are read here. */
      sources?: ReplySources | undefined;
    } = {},
  ): Promise<Passage[]> {
    const words = queryWords(query);
    if (words.length === 0) return [];
    const chatbot = o.chatbot ?? (await this.d.chatbotById(chatbotId));
    if (!chatbot) return [];
    const min = o.minScore ?? ANSWER_THRESHOLD;
    // Excerpts are made for the passages answered only (each reads its passage's text again).
    const languages = new Map<Passage, TextLanguage>();
    let found = await this.indexed(chatbot.chatbotId, query, words, languages, o.sources?.live);
    // A draft's view: the live sources it keeps, and its own (indexed apart), merged by score.
    if (o.view) {
      const leftOut = new Set(o.view.leftOut);
      found = [
        ...found.filter((p) => !leftOut.has(p.sourceId)),
        ...(await this.indexed(o.view.draftKey, query, words, languages, o.sources?.draft)),
      ].sort((a, b) => b.score - a.score);
    }
    // The sources' passages in their ranking's order, the knowledge list's in its own, merged by score (a list
    // snippet goes before the passages less sure than it).
    const listed = scoreSnippets(query, chatbot.knowledge, Number.MIN_VALUE);
    const out: Passage[] = [];
    let i = 0;
    let j = 0;
    while (i < found.length || j < listed.length) {
      const a = found[i];
      const b = listed[j];
      if (a && (!b || a.score >= b.score)) {
        out.push(a);
        i++;
      } else {
        out.push(b!);
        j++;
      }
    }
    const answered = out.filter((p) => p.score >= min).slice(0, limit);
    for (const p of answered) {
      const language = languages.get(p);
      if (language) p.excerpt = excerptOf(query, p.text, language);
    }
    return answered;
  }

  /**
   * A chatbot's knowledge sources (with a draft's view, the live ones and the draft's own), read once for a reply:
   * whether there is any to search, and the listing its searches take (searchKnowledge's `sources`).
   */
  async sourcesFor(chatbotId: string, view?: KnowledgeView): Promise<ReplySources> {
    if (!view) return liveSourcesIn(this.d.knowledge, chatbotId);
    const [live, draft] = await Promise.all([
      this.d.knowledge.listSources(chatbotId, MAX_SOURCES),
      this.d.knowledge.listSources(view.draftKey, MAX_SOURCES),
    ]);
    const leftOut = new Set(view.leftOut);
    return { live, draft, any: draft.length > 0 || live.some((s) => !leftOut.has(s.sourceId)) };
  }

  /**
   * The passages of the sources stored under one knowledge key (a chatbot's, or a draft's own) for the question, in
   * their ranking's order: from the key's index in memory when it is built and current, else from the store's
   * full-text search. Each passage's language goes into `languages`, for its excerpt. The key's sources are read
   * unless `given` lists them.
   */
  private async indexed(
    key: string,
    query: string,
    words: string[],
    languages: Map<Passage, TextLanguage>,
    given?: KnowledgeSourceRecord[],
  ): Promise<Passage[]> {
    const found: Passage[] = [];
    const sources = given ?? (await this.d.knowledge.listSources(key, MAX_SOURCES));
    const index = sources.length > 0 ? this.indexes.ready(key, sources) : undefined;
    const lexical = async (): Promise<[Ranked[], TermStats]> => {
      if (sources.length === 0) return [[], { chunks: 0, df: new Map() }];
      if (index) return [rankIndexed(index, words, CANDIDATES), index.stats(stemsOfWords(words))];
      const stats = await this.d.knowledge.termStats(key, stemsOfWords(words));
      const hits = await this.d.knowledge.search({
        chatbotId: key,
        words: searchedWords(words, stats),
        limit: CANDIDATES,
      });
      return [rankHits(words, hits, stats), stats];
    };
    const [[ranked, stats], near] = await Promise.all([lexical(), this.nearest(key, query)]);
    if (ranked.length > 0 || near.length > 0) {
      const byId = new Map(sources.map((s) => [s.sourceId, s]));
      for (const { hit: h, coverage } of fuse(ranked, near, words, stats)) {
        const s = byId.get(h.sourceId);
        if (!s) continue;
        const passage: Passage = {
          sourceId: s.sourceId,
          sourceTitle: s.title,
          title: h.title || s.title,
          // A file has no web address: its passages cite the source and their headings ("Page 3").
          pageUrl: s.kind === "file" ? "" : h.pageUrl,
          anchorUrl: s.kind === "file" ? "" : h.anchorUrl,
          headingPath: h.headingPath,
          text: h.text,
          excerpt: "",
          score: coverage,
          knowledgeVersion: s.version,
        };
        found.push(passage);
        languages.set(passage, h.language);
      }
    }
    return found;
  }

  /** The passages nearest the question's embedding ([] without an embeddings endpoint, or when it fails). */
  private async nearest(chatbotId: string, query: string): Promise<ChunkHit[]> {
    const e = this.d.embedder;
    if (!e) return [];
    try {
      const [v] = await e.embed([query], AbortSignal.timeout(QUERY_EMBED_MS));
      return v ? await this.d.knowledge.nearest({ chatbotId, vector: v, limit: CANDIDATES }) : [];
    } catch (err) {
      this.d.onEmbeddingError?.(err);
      return [];
    }
  }

  /**
   * Starts indexing what is queued (and what a stopped process left indexing), and the scheduled re-syncs: the
   * sources due now at once (a schedule survives a restart: it counts from the stored last indexing), then a look
   * every RESYNC_CHECK_MS.
   */
  start(): void {
    this.kick();
    void this.resyncDue();
    this.timer = setInterval(() => void this.resyncDue(), RESYNC_CHECK_MS);
    this.timer.unref();
  }

  /**
   * Queues the page and site sources whose scheduled re-sync is due (indexed or failed, and their interval passed
   * since their status last changed); answers how many. Their unchanged pages are not indexed again.
   */
  async resyncDue(): Promise<number> {
    if (this.stop.signal.aborted) return 0;
    try {
      const now = this.d.clock.now();
      const due = await this.d.knowledge.dueForResync(now, 100);
      for (const s of due)
        await this.d.knowledge.progress(s.sourceId, { status: "queued", statusReason: "", updatedAt: now });
      if (due.length > 0) this.kick();
      return due.length;
    } catch (e) {
      this.d.onError?.("", e);
      return 0;
    }
  }

  /** Stops indexing (the source being indexed is picked up again on the next start) and waits for it. */
  async close(): Promise<void> {
    this.stop.abort();
    clearInterval(this.timer);
    await this.running;
  }

  /** Resolves once nothing is left to index (tests, and the command line's one-shot indexing). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    if (this.stop.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.d.exclusive("knowledge-indexer", () => this.drain());
        } while (this.again && !this.stop.signal.aborted);
      } catch (e) {
        this.d.onError?.("", e);
      } finally {
        this.running = undefined;
      }
    })();
  }

  private async drain(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const [next] = await this.d.knowledge.pending(1);
      if (!next) return;
      await this.index(next.chatbotId, next.sourceId);
    }
  }

  /** The passages with their embeddings (without, when there is no endpoint or it failed: BM25 still finds them). */
  private async embedded(chunks: ChunkInput[], signal: AbortSignal): Promise<ChunkInput[]> {
    const e = this.d.embedder;
    if (!e || chunks.length === 0) return chunks;
    try {
      const vectors = await e.embed(
        chunks.map((c) => `${c.title}\n${c.headingPath}\n${c.text}`),
        signal,
      );
      return chunks.map((c, i) => ({ ...c, vector: vectors[i] }));
    } catch (err) {
      if (signal.aborted) throw err;
      this.d.onEmbeddingError?.(err);
      return chunks;
    }
  }

  private async index(chatbotId: string, sourceId: string): Promise<void> {
    const k = this.d.knowledge;
    const s = await k.getSource(chatbotId, sourceId);
    if (!s) return;
    const now = () => this.d.clock.now();
    await k.progress(sourceId, { status: "indexing", statusReason: "", updatedAt: now() });
    try {
      const old = await k.pageHashes(sourceId);
      const seen = new Map<string, string>();
      let title = s.title;
      let mediaType = s.mediaType;
      const signal = this.stop.signal;
      const take = async (page: ExtractedPage) => {
        if (signal.aborted) throw signal.reason;
        // The embedder's id is part of the hash: a page indexed without vectors (or by another model) is embedded
        // again on its next resync.
        const hash = sha256(this.d.embedder ? `${this.d.embedder.id}\n${page.markdown}` : page.markdown);
        if (seen.has(page.url)) return;
        seen.set(page.url, hash);
        if (old.get(page.url) === hash) return;
        const chunks = await this.embedded(chunkPage(page), signal);
        if (!(await k.replacePage(s, page.url, hash, chunks))) throw new KnowledgeFailure("the source was deleted");
      };
      if (s.kind === "file") {
        const bytes = await k.content(sourceId);
        if (!bytes) return;
        const r = await this.d.reader.file(bytes, s.fileName, signal);
        mediaType = r.mediaType;
        const [first] = r.pages;
        if (first && s.title === s.fileName && first.title) title = first.title;
        for (const p of r.pages) await take({ ...p, url: p.url || fileUrl(sourceId) });
      } else if (s.kind === "snippets") {
        const bytes = await k.content(sourceId);
        if (!bytes) return;
        const snippets = JSON.parse(new TextDecoder().decode(bytes)) as KnowledgeSnippet[];
        // Each snippet one passage under its title, as the knowledge list always was.
        for (const [i, sn] of snippets.entries())
          await take({
            url: `${sn.url}#snippet-${i + 1}`,
            title: sn.title,
            markdown: `# ${sn.title}\n\n${sn.snippet}`,
          });
      } else if (s.kind === "page") {
        const p = await this.d.reader.page(s.url, signal);
        if (s.title === new URL(s.url).host && p.title) title = p.title;
        await take(p);
      } else {
        for await (const p of this.d.reader.site(s.url, { maxPages: s.maxPages, maxDepth: s.maxDepth }, signal))
          await take(p);
        if (seen.size === 0) throw new KnowledgeFailure(`no page could be read from ${s.url}`);
      }
      await k.keepPages(sourceId, [...seen.keys()]);
      const contentHash = sha256([...seen.values()].sort().join("\n"));
      const chunkCount = await k.chunkCount(sourceId);
      if (chunkCount === 0) throw new KnowledgeFailure("no text was found to index (a scanned PDF has only images)");
      await k.progress(sourceId, {
        status: "indexed",
        statusReason: "",
        title,
        mediaType,
        pageCount: seen.size,
        chunkCount,
        contentHash,
        version: contentHash === s.contentHash ? s.version : s.version + 1,
        indexedAt: now(),
        updatedAt: now(),
      });
    } catch (e) {
      // Stopping leaves the source indexing: the next start picks it up again.
      if (this.stop.signal.aborted) return;
      const reason =
        e instanceof KnowledgeFailure
          ? e.message
          : "indexing failed unexpectedly; resync the source to try again, or contact support if it keeps failing";
      if (!(e instanceof KnowledgeFailure)) this.d.onError?.(sourceId, e);
      // The passages of the last successful indexing stay searchable (a failed resync does not empty a source).
      await k.progress(sourceId, { status: "failed", statusReason: reason, updatedAt: now() });
    }
  }
}
