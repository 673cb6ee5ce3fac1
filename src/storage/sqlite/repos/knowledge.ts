import type { KnowledgeRepository } from "../../../domain/knowledge/source.js";
import {
  CHUNK_COLUMNS,
  type ChunkRow,
  type CountedRow,
  chatbotTerm,
  cosine,
  countedChunk,
  countTerms,
  indexedTerms,
  type KnowledgeSourceRow,
  queryStems,
  SOURCE_COLUMNS,
  sourceValues,
  toHit,
  topBy,
  toSource,
  vectorBytes,
  vectorOf,
} from "../../knowledge-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Knowledge sources in SQLite: passages in knowledge_chunks, their stemmed terms in the FTS5 table knowledge_fts. */
export function sqliteKnowledge(db: Db): Sync<KnowledgeRepository> {
  const add = db.prepare(`INSERT INTO knowledge_sources (${SOURCE_COLUMNS}, content) VALUES (${"?, ".repeat(20)}?)`);
  const get = db.prepare<[string, string], KnowledgeSourceRow>(
    `SELECT ${SOURCE_COLUMNS} FROM knowledge_sources WHERE chatbot_id = ? AND source_id = ?`,
  );
  const list = db.prepare<[string, number], KnowledgeSourceRow>(
    `SELECT ${SOURCE_COLUMNS} FROM knowledge_sources WHERE chatbot_id = ? ORDER BY created_at, source_id LIMIT ?`,
  );
  const content = db.prepare<[string], { content: Buffer }>(
    "SELECT content FROM knowledge_sources WHERE source_id = ?",
  );
  const pending = db.prepare<[number], { source_id: string; chatbot_id: string }>(
    `SELECT source_id, chatbot_id FROM knowledge_sources WHERE status IN ('queued', 'indexing')
      ORDER BY created_at, source_id LIMIT ?`,
  );
  const due = db.prepare<[number, number], { source_id: string; chatbot_id: string }>(
    `SELECT source_id, chatbot_id FROM knowledge_sources
      WHERE resync_interval_hours > 0 AND status IN ('indexed', 'failed')
        AND updated_at + resync_interval_hours * 3600000 <= ?
      ORDER BY updated_at, source_id LIMIT ?`,
  );
  const schedule = db.prepare(
    "UPDATE knowledge_sources SET resync_interval_hours = ? WHERE chatbot_id = ? AND source_id = ?",
  );
  const progress = db.prepare(
    `UPDATE knowledge_sources SET status = ?, status_reason = coalesce(?, status_reason), title = coalesce(?, title),
       media_type = coalesce(?, media_type), page_count = coalesce(?, page_count), chunk_count = coalesce(?, chunk_count),
       content_hash = coalesce(?, content_hash), version = coalesce(?, version), indexed_at = coalesce(?, indexed_at),
       updated_at = ?
     WHERE source_id = ?`,
  );
  const pages = db.prepare<[string], { page_url: string; content_hash: string }>(
    "SELECT page_url, content_hash FROM knowledge_pages WHERE source_id = ?",
  );
  const exists = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM knowledge_sources WHERE source_id = ?");
  const pageChunks = db.prepare<[string, string], { chunk_id: number } & CountedRow>(
    "SELECT chunk_id, title, heading_path, text, language FROM knowledge_chunks WHERE source_id = ? AND page_url = ?",
  );
  const sourceChunks = db.prepare<[string], { chunk_id: number } & CountedRow>(
    "SELECT chunk_id, title, heading_path, text, language FROM knowledge_chunks WHERE source_id = ?",
  );
  const addTerm = db.prepare(
    `INSERT INTO knowledge_terms (chatbot_id, term, df) VALUES (?, ?, ?)
      ON CONFLICT (chatbot_id, term) DO UPDATE SET df = df + excluded.df`,
  );
  const dropTerm = db.prepare("DELETE FROM knowledge_terms WHERE chatbot_id = ? AND term = ? AND df <= 0");
  const termDf = db.prepare<[string, string], { df: number }>(
    "SELECT df FROM knowledge_terms WHERE chatbot_id = ? AND term = ?",
  );
  const vectors = db.prepare<[string], { chunk_id: number; vector: Buffer }>(
    "SELECT chunk_id, vector FROM knowledge_chunks WHERE chatbot_id = ? AND vector IS NOT NULL",
  );
  const chunkById = db.prepare<[number], ChunkRow>(
    `SELECT ${CHUNK_COLUMNS}, 0 AS rank FROM knowledge_chunks WHERE chunk_id = ?`,
  );
  const applyTerms = (chatbotId: string, delta: Map<string, number>) => {
    for (const [term, d] of delta) {
      if (d === 0) continue;
      addTerm.run(chatbotId, term, d);
      if (d < 0) dropTerm.run(chatbotId, term);
    }
  };
  const deleteFts = db.prepare("DELETE FROM knowledge_fts WHERE rowid = ?");
  const deletePageChunks = db.prepare("DELETE FROM knowledge_chunks WHERE source_id = ? AND page_url = ?");
  const upsertPage = db.prepare(
    `INSERT INTO knowledge_pages (source_id, page_url, content_hash) VALUES (?, ?, ?)
      ON CONFLICT (source_id, page_url) DO UPDATE SET content_hash = excluded.content_hash`,
  );
  const insertChunk = db.prepare(
    `INSERT INTO knowledge_chunks (source_id, chatbot_id, page_url, title, anchor_url, heading_path, text, language,
       position, vector)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertFts = db.prepare("INSERT INTO knowledge_fts (rowid, terms) VALUES (?, ?)");
  const pageUrls = db.prepare<[string], { page_url: string }>(
    "SELECT page_url FROM knowledge_pages WHERE source_id = ?",
  );
  const deletePage = db.prepare("DELETE FROM knowledge_pages WHERE source_id = ? AND page_url = ?");
  const count = db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM knowledge_chunks WHERE source_id = ?");
  const deleteChunks = db.prepare("DELETE FROM knowledge_chunks WHERE source_id = ?");
  const deletePages = db.prepare("DELETE FROM knowledge_pages WHERE source_id = ?");
  const deleteSource = db.prepare("DELETE FROM knowledge_sources WHERE chatbot_id = ? AND source_id = ?");
  const move = db.prepare(
    `UPDATE knowledge_sources SET chatbot_id = ?, status = 'queued', status_reason = '', updated_at = ?
      WHERE source_id = ? AND chatbot_id = ?`,
  );
  // The best rowids from the index alone, then their rows: a row is read only for the passages returned, not for
  // every match. The chatbot's term intersected inside the index only when the first try found too few of its own
  // (the index is shared by all chatbots; matching that term costs each match more).
  const search = db.prepare<[string, number], { rowid: number; rank: number }>(
    `SELECT rowid, -bm25(knowledge_fts) AS rank FROM knowledge_fts WHERE knowledge_fts MATCH ?
      ORDER BY bm25(knowledge_fts), rowid LIMIT ?`,
  );
  const page = db.prepare<[string, number, number], ChunkRow>(
    `SELECT ${CHUNK_COLUMNS}, 0 AS rank FROM knowledge_chunks WHERE chatbot_id = ? ORDER BY chunk_id LIMIT ? OFFSET ?`,
  );
  const chunkOf = db.prepare<[number, string], ChunkRow>(
    `SELECT ${CHUNK_COLUMNS}, 0 AS rank FROM knowledge_chunks WHERE chunk_id = ? AND chatbot_id = ?`,
  );

  /** Removes a page's passages, counting their terms out into `delta`. */
  const dropPage = (sourceId: string, pageUrl: string, delta: Map<string, number>) => {
    const rows = pageChunks.all(sourceId, pageUrl);
    for (const { chunk_id } of rows) deleteFts.run(chunk_id);
    countTerms(rows.map(countedChunk), -1, delta);
    deletePageChunks.run(sourceId, pageUrl);
  };
  // Savepoints when the caller's unit of work is open, a transaction of its own otherwise.
  const replacePage = db.transaction(
    (
      s: { sourceId: string; chatbotId: string },
      pageUrl: string,
      hash: string,
      chunks: Parameters<KnowledgeRepository["replacePage"]>[3],
    ) => {
      if (!exists.get(s.sourceId)) return false;
      const delta = new Map<string, number>();
      dropPage(s.sourceId, pageUrl, delta);
      upsertPage.run(s.sourceId, pageUrl, hash);
      for (const c of chunks) {
        const id = insertChunk.run(
          s.sourceId,
          s.chatbotId,
          pageUrl,
          c.title,
          c.anchorUrl,
          c.headingPath,
          c.text,
          c.language,
          c.position,
          vectorBytes(c.vector),
        ).lastInsertRowid;
        insertFts.run(id, indexedTerms(c, s.chatbotId));
      }
      applyTerms(s.chatbotId, countTerms(chunks, 1, delta));
      return true;
    },
  );
  const chatbotOf = db.prepare<[string], { chatbot_id: string }>(
    "SELECT chatbot_id FROM knowledge_sources WHERE source_id = ?",
  );
  const keepPages = db.transaction((sourceId: string, keep: string[]) => {
    const kept = new Set(keep);
    const delta = new Map<string, number>();
    for (const { page_url } of pageUrls.all(sourceId))
      if (!kept.has(page_url)) {
        dropPage(sourceId, page_url, delta);
        deletePage.run(sourceId, page_url);
      }
    const owner = chatbotOf.get(sourceId);
    if (owner) applyTerms(owner.chatbot_id, delta);
  });
  const removeSource = db.transaction((chatbotId: string, sourceId: string) => {
    if (deleteSource.run(chatbotId, sourceId).changes === 0) return false;
    const rows = sourceChunks.all(sourceId);
    for (const { chunk_id } of rows) deleteFts.run(chunk_id);
    applyTerms(chatbotId, countTerms(rows.map(countedChunk), -1, new Map()));
    deleteChunks.run(sourceId);
    deletePages.run(sourceId);
    return true;
  });
  return {
    addSource: (s, bytes) => void add.run(...sourceValues(s), Buffer.from(bytes)),
    getSource: (chatbotId, sourceId) => {
      const r = get.get(chatbotId, sourceId);
      return r && toSource(r);
    },
    listSources: (chatbotId, limit) => list.all(chatbotId, limit).map(toSource),
    content: (sourceId) => {
      const r = content.get(sourceId);
      return r && new Uint8Array(r.content);
    },
    pending: (limit) => pending.all(limit).map((r) => ({ sourceId: r.source_id, chatbotId: r.chatbot_id })),
    dueForResync: (now, limit) => due.all(now, limit).map((r) => ({ sourceId: r.source_id, chatbotId: r.chatbot_id })),
    setResyncInterval: (chatbotId, sourceId, hours) => schedule.run(hours, chatbotId, sourceId).changes === 1,
    progress: (sourceId, p) =>
      progress.run(
        p.status,
        p.statusReason ?? null,
        p.title ?? null,
        p.mediaType ?? null,
        p.pageCount ?? null,
        p.chunkCount ?? null,
        p.contentHash ?? null,
        p.version ?? null,
        p.indexedAt ?? null,
        p.updatedAt,
        sourceId,
      ).changes === 1,
    pageHashes: (sourceId) => new Map(pages.all(sourceId).map((r) => [r.page_url, r.content_hash])),
    replacePage: (s, pageUrl, hash, chunks) => replacePage(s, pageUrl, hash, chunks),
    keepPages: (sourceId, keep) => keepPages(sourceId, keep),
    chunkCount: (sourceId) => count.get(sourceId)?.n ?? 0,
    moveSource: (sourceId, from, to, now) => move.run(to, now, sourceId, from).changes === 1,
    removeSource: (chatbotId, sourceId) => removeSource(chatbotId, sourceId),
    search: (q) => {
      const stems = queryStems(q.words);
      if (stems.length === 0) return [];
      // Each term quoted (they are letters and digits only): FTS5 query syntax never reaches the question's text.
      const words = stems.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
      const rows = (match: string, limit: number) => {
        const ids = search.all(match, limit);
        const out = ids.flatMap((r) => {
          const row = chunkOf.get(r.rowid, q.chatbotId);
          return row ? [{ ...toHit(row), rank: r.rank }] : [];
        });
        return { out: out.slice(0, q.limit), full: ids.length === limit };
      };
      const first = rows(words, q.limit * 2);
      if (first.out.length >= q.limit || !first.full) return first.out;
      return rows(`(${words}) AND "${chatbotTerm(q.chatbotId)}"`, q.limit).out;
    },
    passages: (chatbotId, after, limit) => page.all(chatbotId, limit, after).map(toHit),
    termStats: (chatbotId, terms) => {
      const df = new Map<string, number>();
      for (const t of new Set(terms)) {
        const n = termDf.get(chatbotId, t)?.df;
        if (n) df.set(t, n);
      }
      return { chunks: termDf.get(chatbotId, "")?.df ?? 0, df };
    },
    nearest: (q) => {
      // Every vector of the chatbot compared (no vector index): fine for the passages of one chatbot's sources.
      const best = topBy(vectors.iterate(q.chatbotId), (r) => cosine(q.vector, vectorOf(r.vector)), q.limit);
      return best.map(({ x, s }) => ({ ...toHit(chunkById.get(x.chunk_id)!), rank: s }));
    },
  };
}
