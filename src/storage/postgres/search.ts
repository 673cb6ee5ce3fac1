import type { SearchHit, SearchQuery, SearchRepository } from "../../domain/conversation/search.js";
import { type HitRow, toSearchHit } from "../search-rows.js";
import type { PgDb } from "./db.js";

/** A tsquery: every folded word, the last as a prefix, all required (the words hold only letters, digits, marks). */
const queryOf = (words: readonly string[]) =>
  words.map((w, i) => (i === words.length - 1 ? `'${w}':*` : `'${w}'`)).join(" & ");

const FILTERS = `c.account_id = $2
    AND ($3::text IS NULL OR c.chatbot_id = $3)
    AND ($12::text[] IS NULL OR NOT (c.chatbot_id = ANY($12::text[])))
    AND ($4::text IS NULL OR c.status = $4)
    AND ($5::text IS NULL OR lower(c.assigned_to) = $5)
    AND ($6::bigint IS NULL OR x.created_at >= $6)
    AND ($7::bigint IS NULL OR x.created_at < $7)
    AND ($8::bigint IS NULL OR (x.created_at, x.ID) < ($8, $9::text))
    AND ($11::text IS NULL OR EXISTS (SELECT 1 FROM conversation_labels l
      WHERE l.conversation_id = c.conversation_id AND l.label_id = $11))`;

const HIT = `c.chatbot_id, c.contact_id, c.status, c.assigned_to, k.user_id, k.contact_name,
  (SELECT b.name FROM chatbots b WHERE b.chatbot_id = c.chatbot_id) AS chatbot_name`;

const MESSAGES = `SELECT x.message_id AS id, x.conversation_id, x.role, '' AS author_email, x.content, x.created_at, ${HIT}
  FROM messages x
  JOIN conversations c ON c.conversation_id = x.conversation_id
  JOIN contacts k ON k.contact_id = c.contact_id
  WHERE x.search_words @@ to_tsquery('simple', $1) AND ${FILTERS.replace("x.ID", "x.message_id")}
  ORDER BY x.created_at DESC, x.message_id DESC LIMIT $10`;

const NOTES = `SELECT x.note_id AS id, x.conversation_id, 'note' AS role, x.author_email, x.content, x.created_at, ${HIT}
  FROM conversation_notes x
  JOIN conversations c ON c.conversation_id = x.conversation_id
  JOIN contacts k ON k.contact_id = c.contact_id
  WHERE x.search_words @@ to_tsquery('simple', $1) AND x.account_id = $2 AND ${FILTERS.replace("x.ID", "x.note_id")}
  ORDER BY x.created_at DESC, x.note_id DESC LIMIT $10`;

/** A position: the hit's instant and id ("<ms>:<id>"), newest first. */
function parsePosition(after: string | undefined): [number, string] | [null, null] | undefined {
  if (after === undefined) return [null, null];
  const m = /^(\d{1,15}):([\w-]{1,40})$/.exec(after);
  return m ? [Number(m[1]), m[2]!] : undefined;
}

/** Search over messages and notes in PostgreSQL (search_words: migration 25). */
export function pgSearch(db: PgDb): SearchRepository {
  const run = async (name: string, sql: string, source: SearchHit["source"], q: SearchQuery, after?: string) => {
    const at = parsePosition(after);
    // A position this search did not give finds nothing.
    if (!at) return [];
    const rows = await db.rows<HitRow>(name, sql, [
      queryOf(q.words),
      q.accountId,
      q.chatbotId ?? null,
      q.status ?? null,
      q.assignee ?? null,
      q.from ?? null,
      q.before ?? null,
      at[0],
      at[1],
      q.limit,
      q.labelId ?? null,
      q.hiddenChatbots ?? null,
    ]);
    return rows.map((r) => toSearchHit(source, r, `${Number(r.created_at)}:${r.id}`));
  };
  return {
    messages: (q, after) => run("search_messages", MESSAGES, "message", q, after),
    notes: (q, after) => run("search_notes", NOTES, "note", q, after),
  };
}
