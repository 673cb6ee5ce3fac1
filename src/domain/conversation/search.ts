import type { AccountCaller } from "../caller.js";
import { invalidArgument } from "../errors.js";
import { requireUuid } from "../ids.js";
import { optionalEmail, requireText } from "../validate.js";
import { foldForSearch } from "./search-fold.js";

/** Words a search query may hold (each must match: AND). */
export const MAX_SEARCH_WORDS = 8;
/** Results per page at most, and when absent. */
export const MAX_SEARCH_LIMIT = 50;
const DEFAULT_SEARCH_LIMIT = 20;

// A word: letters, digits and their combining marks. Everything else separates words (punctuation, blanks, symbols).
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The indexed text of a message or note, the same on every back end: folded as the contact search folds
 * (foldForSearch: case, accents, compatibility forms), split into words, one space between them. Both back ends'
 * tokenizers then split it at the spaces only, so a word means the same thing everywhere ("A-1001" is "a" "1001").
 */
export function searchDocText(content: string): string {
  return (foldForSearch(content).match(WORD) ?? []).join(" ");
}

/**
 * The words of a query, folded the same way (at most MAX_SEARCH_WORDS). Each matches a whole word, except the
 * last, which matches as a prefix (what is being typed): "comm" finds "commande", and "a 1001" does not find
 * every word that starts with an a.
 */
export function searchWords(query: string): string[] {
  const words = foldForSearch(query).match(WORD) ?? [];
  const last = words.slice(-1);
  // Repeats go (the last stays last: it is the prefix).
  return [...new Set([...words.slice(0, -1).filter((w) => w !== last[0]), ...last])].slice(-MAX_SEARCH_WORDS);
}

/** Whether a folded word of a text matches the query's words (the last one as a prefix). */
export function matchesWord(folded: string, words: readonly string[]): boolean {
  const last = words.length - 1;
  return words.some((w, i) => (i === last ? folded.startsWith(w) : folded === w));
}

/** Where a search looks and what it keeps: the account's messages (and notes), filtered. */
export interface SearchQuery {
  accountId: string;
  /** Folded words (searchWords): each a whole word of the text, the last a prefix of one; all must occur. */
  words: string[];
  chatbotId?: string | undefined;
  /** The chatbots whose conversations the caller does not see (their teams': caller.ts); absent: none. */
  hiddenChatbots?: readonly string[] | undefined;
  /** Only conversations that carry this label. */
  labelId?: string | undefined;
  /** The conversation's stored status. */
  status?: "live" | "closed" | undefined;
  /** Who holds the conversation: an e-mail in lower case, or ai_agent. */
  assignee?: string | undefined;
  /** The message's or note's instant, from (inclusive) and before (exclusive), epoch ms. */
  from?: number | undefined;
  before?: number | undefined;
  /** Hits to read at most. */
  limit: number;
}

/** One message or note found, with its conversation's state. */
export interface SearchHit {
  source: "message" | "note";
  /** The message's or note's id. */
  id: string;
  conversationId: string;
  chatbotId: string;
  /** The chatbot's name as it is now. */
  chatbotName: string;
  contactId: string;
  userId: string;
  contactName: string;
  status: "live" | "closed";
  assignedTo: string;
  /** A message's role (user, assistant, operator); "note" for a note. */
  role: string;
  /** A note's author; "" for a message. */
  authorEmail: string;
  content: string;
  createdAt: number;
  /**
   * The hit's place in its source's order (newest written first), opaque to the domain: a later page asks for
   * what comes after it.
   */
  position: string;
}

/** Storage of the full-text indexes over messages and notes (both back ends: the same words, the same order). */
export interface SearchRepository {
  /** The account's messages matching every word and filter, newest written first, after `after` when given. */
  messages(q: SearchQuery, after: string | undefined): Promise<SearchHit[]>;
  /** The same over the account's notes. */
  notes(q: SearchQuery, after: string | undefined): Promise<SearchHit[]>;
}

/** A piece of a snippet: text as written, and whether it is a matched word. */
export interface SnippetPart {
  text: string;
  match: boolean;
}

/** A hit as a result: the hit and its snippet. */
export interface SearchResult extends Omit<SearchHit, "position" | "content"> {
  snippet: SnippetPart[];
}

/** One page of results. */
export interface SearchPage {
  results: SearchResult[];
  /** Pass as page_token for the next page; "" when there is none. */
  nextPageToken: string;
}

/** What a search request asks (the contract's fields). */
export interface SearchInput {
  query: string;
  chatbotId: string;
  /** A label's id, or "" for any. */
  labelId?: string;
  status: string;
  /** An e-mail, ai_agent, or "" for anyone. */
  operator: string;
  /** YYYY-MM-DD, UTC days, inclusive; "" for open-ended. */
  from: string;
  to: string;
  limit: number | undefined;
  pageToken: string;
}

const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 200;

/**
 * A snippet of `content` around its first matched word: the text as written (never HTML), cut at word edges with
 * "…", each word that matches one of `words` (matchesWord) marked. Callers escape it where they render it.
 */
export function snippet(content: string, words: readonly string[]): SnippetPart[] {
  const spans: { start: number; end: number }[] = [];
  for (const m of content.matchAll(WORD)) {
    const folded = foldForSearch(m[0]);
    if (matchesWord(folded, words)) spans.push({ start: m.index, end: m.index + m[0].length });
  }
  const first = spans[0]?.start ?? 0;
  let start = Math.max(0, first - SNIPPET_BEFORE);
  let end = Math.min(content.length, start + SNIPPET_LENGTH);
  // Cut at blanks, not inside a word (when a blank is near).
  if (start > 0) {
    const blank = content.indexOf(" ", start);
    if (blank !== -1 && blank < first) start = blank + 1;
  }
  if (end < content.length) {
    const blank = content.lastIndexOf(" ", end);
    if (blank > first) end = blank;
  }
  const parts: SnippetPart[] = [];
  const push = (text: string, match: boolean) => {
    if (text === "") return;
    const last = parts[parts.length - 1];
    if (last && last.match === match) last.text += text;
    else parts.push({ text, match });
  };
  if (start > 0) push("…", false);
  let at = start;
  for (const s of spans) {
    if (s.end <= start || s.start >= end) continue;
    push(content.slice(at, Math.max(at, s.start)), false);
    push(content.slice(Math.max(at, s.start), Math.min(end, s.end)), true);
    at = Math.min(end, s.end);
  }
  push(content.slice(at, end), false);
  if (end < content.length) push("…", false);
  // Lines become blanks: a snippet is one line.
  for (const p of parts) p.text = p.text.replace(/\s+/g, " ");
  return parts;
}

/** A snippet as HTML: every piece escaped, the matched words in <mark>. */
export function snippetHtml(parts: readonly SnippetPart[]): string {
  return parts.map((p) => (p.match ? `<mark>${escapeHtml(p.text)}</mark>` : escapeHtml(p.text))).join("");
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

const DAY = 86_400_000;

function parseDay(field: string, v: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== v)
    throw invalidArgument(field, "must be a date, YYYY-MM-DD");
  return t;
}

/** A page token: where each source's last page ended ("" not read yet; "end" when it has nothing more). */
interface Cursor {
  m: string;
  n: string;
}

function readToken(token: string): Cursor {
  if (token === "") return { m: "", n: "" };
  try {
    const c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Cursor;
    if (typeof c.m === "string" && typeof c.n === "string" && c.m.length <= 64 && c.n.length <= 64) return c;
  } catch {
    // refused below
  }
  throw invalidArgument("page_token", "is not a token this search gave");
}

function writeToken(c: Cursor): string {
  return Buffer.from(JSON.stringify(c), "utf8").toString("base64url");
}

/**
 * Search across the account's messages and notes. Notes are read only for callers who may see them (the
 * account's people and servers: never a customer's frame, which cannot call this at all).
 */
export class ConversationSearch {
  constructor(private readonly search: SearchRepository) {}

  async find(caller: AccountCaller, input: SearchInput, withNotes: boolean): Promise<SearchPage> {
    const words = searchWords(requireText("query", input.query));
    if (words.length === 0) throw invalidArgument("query", "must contain a letter or a digit");
    const status = input.status === "" ? undefined : input.status;
    if (status !== undefined && status !== "live" && status !== "closed")
      throw invalidArgument("status", "must be live or closed");
    const chatbotId = input.chatbotId === "" ? undefined : requireUuid("chatbot_id", input.chatbotId);
    const labelId = !input.labelId ? undefined : requireUuid("label_id", input.labelId);
    let assignee: string | undefined;
    if (input.operator !== "")
      assignee = input.operator === "ai_agent" ? "ai_agent" : optionalEmail("operator", input.operator).toLowerCase();
    const from = input.from === "" ? undefined : parseDay("from", input.from);
    const before = input.to === "" ? undefined : parseDay("to", input.to) + DAY;
    if (from !== undefined && before !== undefined && before <= from)
      throw invalidArgument("to", "must be on or after from");
    const limit = input.limit ?? DEFAULT_SEARCH_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
      throw invalidArgument("limit", `must be between 1 and ${MAX_SEARCH_LIMIT}`);
    const cursor = readToken(input.pageToken);
    const q: SearchQuery = {
      accountId: caller.accountId,
      words,
      chatbotId,
      hiddenChatbots: caller.hiddenChatbots?.length ? caller.hiddenChatbots : undefined,
      labelId,
      status,
      assignee,
      from,
      before,
      limit: limit + 1,
    };
    const read = (source: "m" | "n") => {
      const at = cursor[source];
      if (at === "end" || (source === "n" && !withNotes)) return Promise.resolve([] as SearchHit[]);
      return source === "m" ? this.search.messages(q, at || undefined) : this.search.notes(q, at || undefined);
    };
    const [messages, notes] = await Promise.all([read("m"), read("n")]);
    // Merged newest first: each page takes a prefix of each source, so the next page starts after what it took.
    const taken: SearchHit[] = [];
    let i = 0;
    let j = 0;
    while (taken.length < limit && (i < messages.length || j < notes.length)) {
      const m = messages[i];
      const n = notes[j];
      if (m && (!n || m.createdAt >= n.createdAt)) taken.push(messages[i++]!);
      else taken.push(notes[j++]!);
    }
    const next = (hits: SearchHit[], used: number, was: string): string => {
      if (was === "end") return "end";
      if (used === hits.length) return "end";
      return used === 0 ? was : hits[used - 1]!.position;
    };
    const nextCursor: Cursor = {
      m: next(messages, i, cursor.m),
      n: withNotes ? next(notes, j, cursor.n) : "end",
    };
    const more = nextCursor.m !== "end" || nextCursor.n !== "end";
    return {
      results: taken.map(({ position: _, content, ...hit }) => ({ ...hit, snippet: snippet(content, words) })),
      nextPageToken: more ? writeToken(nextCursor) : "",
    };
  }
}
