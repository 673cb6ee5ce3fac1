import type { KnowledgeRepository } from "../../domain/knowledge/source.js";
import {
  CHUNK_COLUMNS,
  type ChunkRow,
  indexedText,
  type KnowledgeSourceRow,
  SOURCE_COLUMNS,
  sourceValues,
  toHit,
  toSource,
} from "../knowledge-rows.js";
import type { PgDb } from "./db.js";

const placeholders = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ");

/**
 * Knowledge sources in PostgreSQL: each passage's tsvector is made in its own language's text search configuration
 * (stemming), and a question is searched in each passage's language, ranked by ts_rank.
 */
export function pgKnowledge(db: PgDb): KnowledgeRepository {
  const dropPage = (sourceId: string, pageUrl: string) =>
    db.count("knowledge_drop_page", "DELETE FROM knowledge_chunks WHERE source_id = $1 AND page_url = $2", [
      sourceId,
      pageUrl,
    ]);
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
        await dropPage(s.sourceId, pageUrl);
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
               language, position, tsv)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_tsvector($11::regconfig, $10))`,
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
            ],
          );
        return true;
      }),
    keepPages: (sourceId, keep) =>
      db.unit(async () => {
        await db.count(
          "knowledge_keep_chunks",
          "DELETE FROM knowledge_chunks WHERE source_id = $1 AND NOT (page_url = ANY($2::text[]))",
          [sourceId, keep],
        );
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
    removeSource: (chatbotId, sourceId) =>
      db.unit(async () => {
        const n = await db.count(
          "knowledge_remove",
          "DELETE FROM knowledge_sources WHERE chatbot_id = $1 AND source_id = $2",
          [chatbotId, sourceId],
        );
        if (n === 0) return false;
        await db.count("knowledge_remove_chunks", "DELETE FROM knowledge_chunks WHERE source_id = $1", [sourceId]);
        await db.count("knowledge_remove_pages", "DELETE FROM knowledge_pages WHERE source_id = $1", [sourceId]);
        return true;
      }),
    search: async (q) => {
      if (q.words.length === 0) return [];
      // The words are letters and digits only (wordsOf): joined as alternatives, each stemmed by to_tsquery in the
      // passage's language.
      const query = q.words.join(" | ");
      return (
        await db.rows<ChunkRow>(
          "knowledge_search",
          `SELECT ${CHUNK_COLUMNS.split(", ")
            .map((c) => `c.${c}`)
            .join(", ")}, ts_rank(c.tsv, x.q) AS rank
             FROM knowledge_chunks c, LATERAL (SELECT to_tsquery(c.language::regconfig, $2) AS q) x
            WHERE c.chatbot_id = $1 AND c.tsv @@ x.q
            ORDER BY rank DESC, c.chunk_id LIMIT $3`,
          [q.chatbotId, query, q.limit],
        )
      ).map(toHit);
    },
  };
}
