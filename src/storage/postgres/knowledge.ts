import { LANGUAGES } from "../../domain/knowledge/language.js";
import type { KnowledgeRepository } from "../../domain/knowledge/source.js";
import {
  CHUNK_COLUMNS,
  type ChunkRow,
  type CountedRow,
  cosine,
  countedChunk,
  countTerms,
  indexedText,
  type KnowledgeSourceRow,
  SOURCE_COLUMNS,
  sourceValues,
  toHit,
  topBy,
  toSource,
  vectorBytes,
  vectorOf,
} from "../knowledge-rows.js";
import type { PgDb } from "./db.js";

const placeholders = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ");

/**
 * Knowledge sources in PostgreSQL: each passage's tsvector is made in its own language's text search configuration
 * (stemming), and a question is searched in each passage's language, ranked by ts_rank.
 */
export function pgKnowledge(db: PgDb): KnowledgeRepository {
  /** Removes a page's passages, counting their terms out into `delta`. */
  const dropPage = async (sourceId: string, pageUrl: string, delta: Map<string, number>) => {
    const rows = await db.rows<CountedRow>(
      "knowledge_drop_page",
      `DELETE FROM knowledge_chunks WHERE source_id = $1 AND page_url = $2
        RETURNING title, heading_path, text, language`,
      [sourceId, pageUrl],
    );
    countTerms(rows.map(countedChunk), -1, delta);
  };
  /** Adds each term's change to the chatbot's counts (in term order: two units of work lock rows alike). */
  const applyTerms = async (chatbotId: string, delta: Map<string, number>) => {
    const changed = [...delta].filter(([, d]) => d !== 0).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    if (changed.length === 0) return;
    await db.count(
      "knowledge_terms_add",
      `INSERT INTO knowledge_terms (chatbot_id, term, df)
         SELECT $1, t, d FROM unnest($2::text[], $3::int[]) AS x(t, d)
       ON CONFLICT (chatbot_id, term) DO UPDATE SET df = knowledge_terms.df + excluded.df`,
      [chatbotId, changed.map(([t]) => t), changed.map(([, d]) => d)],
    );
    const dropped = changed.filter(([, d]) => d < 0).map(([t]) => t);
    if (dropped.length > 0)
      await db.count(
        "knowledge_terms_drop",
        "DELETE FROM knowledge_terms WHERE chatbot_id = $1 AND term = ANY($2::text[]) AND df <= 0",
        [chatbotId, dropped],
      );
  };
  return {
    addSource: async (s, content) =>
      void (await db.count(
        "knowledge_add",
        `INSERT INTO knowledge_sources (${SOURCE_COLUMNS}, content) VALUES (${placeholders(1, 21)})`,
        [...sourceValues(s), Buffer.from(content)],
      )),
    getSource: async (chatbotId, sourceId) => {
      const [r] = await db.rows<KnowledgeSourceRow>(
        "knowledge_get",
        `SELECT ${SOURCE_COLUMNS} FROM knowledge_sources WHERE chatbot_id = $1 AND source_id = $2`,
        [chatbotId, sourceId],
      );
      return r && toSource(r);
    },
    listSources: async (chatbotId, limit) =>
      (
        await db.rows<KnowledgeSourceRow>(
          "knowledge_list",
          `SELECT ${SOURCE_COLUMNS} FROM knowledge_sources WHERE chatbot_id = $1 ORDER BY created_at, source_id LIMIT $2`,
          [chatbotId, limit],
        )
      ).map(toSource),
    content: async (sourceId) => {
      const [r] = await db.rows<{ content: Buffer }>(
        "knowledge_content",
        "SELECT content FROM knowledge_sources WHERE source_id = $1",
        [sourceId],
      );
      return r && new Uint8Array(r.content);
    },
    pending: async (limit) =>
      (
        await db.rows<{ source_id: string; chatbot_id: string }>(
          "knowledge_pending",
          `SELECT source_id, chatbot_id FROM knowledge_sources WHERE status IN ('queued', 'indexing')
            ORDER BY created_at, source_id LIMIT $1`,
          [limit],
        )
      ).map((r) => ({ sourceId: r.source_id, chatbotId: r.chatbot_id })),
    dueForResync: async (now, limit) =>
      (
        await db.rows<{ source_id: string; chatbot_id: string }>(
          "knowledge_due",
          `SELECT source_id, chatbot_id FROM knowledge_sources
            WHERE resync_interval_hours > 0 AND status IN ('indexed', 'failed')
              AND updated_at + resync_interval_hours::bigint * 3600000 <= $1
            ORDER BY updated_at, source_id LIMIT $2`,
          [now, limit],
        )
      ).map((r) => ({ sourceId: r.source_id, chatbotId: r.chatbot_id })),
    setResyncInterval: async (chatbotId, sourceId, hours) =>
      (await db.count(
        "knowledge_schedule",
        "UPDATE knowledge_sources SET resync_interval_hours = $1 WHERE chatbot_id = $2 AND source_id = $3",
        [hours, chatbotId, sourceId],
      )) === 1,
    progress: async (sourceId, p) =>
      (await db.count(
        "knowledge_progress",
        `UPDATE knowledge_sources SET status = $1, status_reason = coalesce($2, status_reason),
           title = coalesce($3, title), media_type = coalesce($4, media_type), page_count = coalesce($5, page_count),
           chunk_count = coalesce($6, chunk_count), content_hash = coalesce($7, content_hash),
           version = coalesce($8, version), indexed_at = coalesce($9, indexed_at), updated_at = $10
         WHERE source_id = $11`,
        [
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
        ],
      )) === 1,
    pageHashes: async (sourceId) =>
      new Map(
        (
          await db.rows<{ page_url: string; content_hash: string }>(
            "knowledge_page_hashes",
            "SELECT page_url, content_hash FROM knowledge_pages WHERE source_id = $1",
            [sourceId],
          )
        ).map((r) => [r.page_url, r.content_hash]),
      ),
    replacePage: (s, pageUrl, hash, chunks) =>
      db.unit(async () => {
        // Locks the source: a delete waits for this page, or this page finds the source gone.
        const [live] = await db.rows(
          "knowledge_lock",
          "SELECT 1 AS one FROM knowledge_sources WHERE source_id = $1 FOR UPDATE",
          [s.sourceId],
        );
        if (!live) return false;
        const delta = new Map<string, number>();
        await dropPage(s.sourceId, pageUrl, delta);
        await db.count(
          "knowledge_page_upsert",
          `INSERT INTO knowledge_pages (source_id, page_url, content_hash) VALUES ($1, $2, $3)
            ON CONFLICT (source_id, page_url) DO UPDATE SET content_hash = excluded.content_hash`,
          [s.sourceId, pageUrl, hash],
        );
        for (const c of chunks)
          await db.count(
            "knowledge_chunk_insert",
            `INSERT INTO knowledge_chunks (source_id, chatbot_id, page_url, title, anchor_url, heading_path, text,
               language, position, tsv, vector)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_tsvector($11::regconfig, $10), $12)`,
            [
              s.sourceId,
              s.chatbotId,
              pageUrl,
              c.title,
              c.anchorUrl,
              c.headingPath,
              c.text,
              c.language,
              c.position,
              indexedText(c),
              c.language,
              vectorBytes(c.vector),
            ],
          );
        await applyTerms(s.chatbotId, countTerms(chunks, 1, delta));
        return true;
      }),
    keepPages: (sourceId, keep) =>
      db.unit(async () => {
        const gone = await db.rows<CountedRow & { chatbot_id: string }>(
          "knowledge_keep_chunks",
          `DELETE FROM knowledge_chunks WHERE source_id = $1 AND NOT (page_url = ANY($2::text[]))
            RETURNING chatbot_id, title, heading_path, text, language`,
          [sourceId, keep],
        );
        if (gone.length > 0) await applyTerms(gone[0]!.chatbot_id, countTerms(gone.map(countedChunk), -1, new Map()));
        await db.count(
          "knowledge_keep_pages",
          "DELETE FROM knowledge_pages WHERE source_id = $1 AND NOT (page_url = ANY($2::text[]))",
          [sourceId, keep],
        );
      }),
    chunkCount: async (sourceId) =>
      Number(
        (
          await db.rows<{ n: string }>(
            "knowledge_chunk_count",
            "SELECT count(*) AS n FROM knowledge_chunks WHERE source_id = $1",
            [sourceId],
          )
        )[0]?.n ?? 0,
      ),
    moveSource: async (sourceId, from, to, now) =>
      (await db.count(
        "knowledge_move",
        `UPDATE knowledge_sources SET chatbot_id = $3, status = 'queued', status_reason = '', updated_at = $4
          WHERE source_id = $1 AND chatbot_id = $2`,
        [sourceId, from, to, now],
      )) === 1,
    removeSource: (chatbotId, sourceId) =>
      db.unit(async () => {
        const n = await db.count(
          "knowledge_remove",
          "DELETE FROM knowledge_sources WHERE chatbot_id = $1 AND source_id = $2",
          [chatbotId, sourceId],
        );
        if (n === 0) return false;
        const gone = await db.rows<CountedRow>(
          "knowledge_remove_chunks",
          "DELETE FROM knowledge_chunks WHERE source_id = $1 RETURNING title, heading_path, text, language",
          [sourceId],
        );
        await applyTerms(chatbotId, countTerms(gone.map(countedChunk), -1, new Map()));
        await db.count("knowledge_remove_pages", "DELETE FROM knowledge_pages WHERE source_id = $1", [sourceId]);
        return true;
      }),
    search: async (q) => {
      if (q.words.length === 0) return [];
      // The words are letters and digits only (wordsOf): joined as alternatives and stemmed as each language would
      // (one query for all passages, as SQLite's), so that the GIN index finds the matches instead of a query made
      // per passage in its own language.
      const query = q.words.join(" | ");
      return (
        await db.rows<ChunkRow>(
          "knowledge_search",
          `WITH x AS (SELECT ${LANGUAGES.map((l) => `to_tsquery('${l}', $2)`).join(" || ")} AS q)
           SELECT ${CHUNK_COLUMNS.split(", ")
             .map((c) => `c.${c}`)
             .join(", ")}, ts_rank(c.tsv, x.q) AS rank
             FROM knowledge_chunks c, x
            WHERE c.tsv @@ x.q AND c.chatbot_id = $1
            ORDER BY rank DESC, c.chunk_id LIMIT $3`,
          [q.chatbotId, query, q.limit],
        )
      ).map(toHit);
    },
    passages: async (chatbotId, after, limit) =>
      (
        await db.rows<ChunkRow>(
          "knowledge_passages",
          `SELECT ${CHUNK_COLUMNS}, 0 AS rank FROM knowledge_chunks WHERE chatbot_id = $1
            ORDER BY chunk_id LIMIT $2 OFFSET $3`,
          [chatbotId, limit, after],
        )
      ).map(toHit),
    termStats: async (chatbotId, terms) => {
      const rows = await db.rows<{ term: string; df: number | string }>(
        "knowledge_term_stats",
        "SELECT term, df FROM knowledge_terms WHERE chatbot_id = $1 AND term = ANY($2::text[])",
        [chatbotId, ["", ...new Set(terms)]],
      );
      const df = new Map(rows.map((r) => [r.term, Number(r.df)]));
      const chunks = df.get("") ?? 0;
      df.delete("");
      return { chunks, df };
    },
    nearest: async (q) => {
      // Every vector of the chatbot compared here (no vector index in the database): fine for one chatbot's sources.
      const rows = await db.rows<{ chunk_id: string; vector: Buffer }>(
        "knowledge_vectors",
        "SELECT chunk_id, vector FROM knowledge_chunks WHERE chatbot_id = $1 AND vector IS NOT NULL",
        [q.chatbotId],
      );
      const best = topBy(rows, (r) => cosine(q.vector, vectorOf(r.vector)), q.limit);
      if (best.length === 0) return [];
      const hits = await db.rows<ChunkRow & { chunk_id: string }>(
        "knowledge_vector_hits",
        `SELECT chunk_id, ${CHUNK_COLUMNS}, 0 AS rank FROM knowledge_chunks WHERE chunk_id = ANY($1::bigint[])`,
        [best.map((b) => b.x.chunk_id)],
      );
      const byId = new Map(hits.map((h) => [String(h.chunk_id), h]));
      return best.flatMap(({ x, s }) => {
        const h = byId.get(String(x.chunk_id));
        return h ? [{ ...toHit(h), rank: s }] : [];
      });
    },
  };
}
