import type { SearchHit, SearchQuery, SearchRepository } from "../../../domain/conversation/search.js";
import { type HitRow, toSearchHit } from "../../search-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface PositionedHitRow extends HitRow {
  /** The row's place in the search order: the cursor after it. */
  pos: number;
}

/** FTS5 MATCH text: every word quoted, the last a prefix, all required (the words hold only letters, digits, marks). */
const matchOf = (words: readonly string[]) =>
  words.map((w, i) => (i === words.length - 1 ? `"${w}"*` : `"${w}"`)).join(" ");

// The full-text index drives the loop, newest rowid first (FTS5 walks its lists backwards), and each hit is checked
// against the account and the filters through primary keys: a page reads its hits and stops.
const FILTERS = `c.account_id = @account
    AND (@chatbot IS NULL OR c.chatbot_id = @chatbot)
    AND (@hidden IS NULL OR c.chatbot_id NOT IN (SELECT value FROM json_each(@hidden)))
    AND (@label IS NULL OR EXISTS (SELECT 1 FROM conversation_labels l
      WHERE l.conversation_id = c.conversation_id AND l.label_id = @label))
    AND (@status IS NULL OR c.status = @status)
    AND (@assignee IS NULL OR lower(c.assigned_to) = @assignee)
    AND (@from IS NULL OR x.created_at >= @from)
    AND (@before IS NULL OR x.created_at < @before)`;

const HIT = `c.chatbot_id, c.contact_id, c.status, c.assigned_to, k.user_id, k.contact_name,
  (SELECT b.name FROM chatbots b WHERE b.chatbot_id = c.chatbot_id) AS chatbot_name`;

/** Search over messages and notes in SQLite (message_search, note_search: migration 31). */
export function sqliteSearch(db: Db): Sync<SearchRepository> {
  const messages = db.prepare<Record<string, unknown>, PositionedHitRow>(`
    SELECT s.rowid AS pos, x.message_id AS id, x.conversation_id, x.role, '' AS author_email, x.content, x.created_at, ${HIT}
    FROM message_search s
    JOIN messages x ON x.rowid = s.rowid
    JOIN conversations c ON c.conversation_id = x.conversation_id
    JOIN contacts k ON k.contact_id = c.contact_id
    WHERE message_search MATCH @match AND s.rowid < @after AND ${FILTERS}
    ORDER BY s.rowid DESC LIMIT @limit`);
  const notes = db.prepare<Record<string, unknown>, PositionedHitRow>(`
    SELECT s.rowid AS pos, x.note_id AS id, x.conversation_id, 'note' AS role, x.author_email, x.content, x.created_at, ${HIT}
    FROM note_search s
    JOIN conversation_notes x ON x.rowid = s.rowid
    JOIN conversations c ON c.conversation_id = x.conversation_id
    JOIN contacts k ON k.contact_id = c.contact_id
    WHERE note_search MATCH @match AND s.rowid < @after AND x.account_id = @account AND ${FILTERS}
    ORDER BY s.rowid DESC LIMIT @limit`);
  const run = (stmt: typeof messages, source: SearchHit["source"], q: SearchQuery, after: string | undefined) =>
    // A position is a rowid this search gave; anything else finds nothing.
    after !== undefined && !/^\d{1,18}$/.test(after)
      ? []
      : stmt
          .all({
            match: matchOf(q.words),
            after: after === undefined ? Number.MAX_SAFE_INTEGER : Number(after),
            account: q.accountId,
            chatbot: q.chatbotId ?? null,
            hidden: q.hiddenChatbots ? JSON.stringify(q.hiddenChatbots) : null,
            label: q.labelId ?? null,
            status: q.status ?? null,
            assignee: q.assignee ?? null,
            from: q.from ?? null,
            before: q.before ?? null,
            limit: q.limit,
          })
          .map((r) => toSearchHit(source, r, String(r.pos)));
  return {
    messages: (q, after) => run(messages, "message", q, after),
    notes: (q, after) => run(notes, "note", q, after),
  };
}
