import { added, reused } from "./lru.js";
import type { MessageRecord } from "./repository.js";

/** One page of a conversation's messages, as the store reads it. */
export interface StoredPage {
  readonly messages: readonly MessageRecord[];
  readonly hasMore: boolean;
}

/**
 * What a reader makes of a page (its encoded answer, say). The cache keeps a remembered page in the forms its
 * readers made of it, not as records: a form is made once per page and handed out again, so it must never be changed.
 */
export interface PageForm<T> {
  build(page: StoredPage): T;
  /** What the form holds per message besides the message's text, in characters' worth (measured). */
  readonly perMessage: number;
}

interface Entry {
  /**
   * How many of the conversation's messages the page saw, clamped to what can change it: the messages of
   * (offset, offset + limit] and whether one more exists. Two counts with the same clamp give the same page.
   */
  seen: number;
  /** Whether more messages follow the page (then it never changes again). */
  hasMore: boolean;
  forms: Map<PageForm<unknown>, unknown>;
  size: number;
  /** When it was added or moved last in the cache's order (lru.ts). */
  lastAt: number;
}

/** How many entries, and roughly how many characters the forms of the pages hold, the cache keeps at most. */
export interface PageCacheLimits {
  entries: number;
  chars: number;
}

/**
 * An exact cache of message pages. Messages are immutable, deleted only with their conversation (erasure, retention:
 * forget() drops its pages), and numbered 1, 2, 3… without gaps, so
 * the page (conversation, offset, limit) depends on the conversation's message count only, and only within
 * [offset, offset + limit + 1]: a page with more after it never changes again and is served without asking the
 * store; the tail page is served when the current count, read in one lookup, gives the same clamp. A page is
 * remembered from its second read on; least recently used entries go first when either limit is reached. Sized from
 * the frame's re-read pattern (README, S9): an entry must outlive the distinct pages read between two re-reads of it.
 *
 * A remembered page keeps only the forms made of it (the frame's JSON route keeps its encoded bytes, outside the
 * JavaScript heap): what the cache holds on the heap is multiplied by V8's heap growth, in peak memory.
 */
export class MessagePageCache {
  private readonly entries = new Map<string, Entry>();
  /** Keys of pages read once lately and not remembered (yet). */
  private readonly askedOnce = new Set<string>();
  private chars = 0;

  /** Reads answered from here, and reads that built their page (the metrics). */
  readonly counts = { hits: 0, misses: 0 };

  constructor(private readonly limits: PageCacheLimits = { entries: 256, chars: 8_000_000 }) {}

  /**
   * The page in the reader's form, from the cache when it is known to be current, else made from `load` (and
   * remembered if read before). `count` reads the conversation's current message count; it is called only for a
   * remembered tail page.
   */
  read<T>(
    conversationId: string,
    offset: number,
    limit: number,
    count: () => Promise<number | undefined>,
    load: () => Promise<StoredPage>,
    form: PageForm<T>,
  ): Promise<T> {
    const key = `${conversationId}:${offset}:${limit}`;
    const hit = this.entries.get(key);
    if (!hit) return this.miss(key, undefined, offset, limit, load, form);
    // A reaction on the count, not an async function awaiting it: a frame's every read of its tail page comes here,
    // and an await costs more. A page with more after it never changes: served without asking the store.
    if (hit.hasMore) return Promise.resolve(this.served(key, hit, true, offset, limit, load, form));
    return count().then((n) => this.served(key, hit, clamp(n, offset, limit) === hit.seen, offset, limit, load, form));
  }

  /** The remembered page when it is `current` and has the reader's form, else the page read again. */
  private served<T>(
    key: string,
    hit: Entry,
    current: boolean,
    offset: number,
    limit: number,
    load: () => Promise<StoredPage>,
    form: PageForm<T>,
  ): T | Promise<T> {
    if (current) {
      const made = reused(this.entries, key, hit, form, this.counts);
      if (made !== undefined) return made as T;
    } else this.drop(key, hit);
    return this.miss(key, hit, offset, limit, load, form);
  }

  /** The page read from the store (and remembered if read before, or remembered in another form). */
  private async miss<T>(
    key: string,
    hit: Entry | undefined,
    offset: number,
    limit: number,
    load: () => Promise<StoredPage>,
    form: PageForm<T>,
  ): Promise<T> {
    this.counts.misses++;
    const stored = await load();
    const built = form.build(stored);
    if (hit || this.admit(key)) this.remember(key, stored, offset, limit, form, built);
    return built;
  }

  /**
   * Whether a page read now is worth remembering: only one read before (recently). Most pages are read once (S9);
   * remembering those would only push re-read pages out and make garbage of what survived young collections.
   */
  private admit(key: string): boolean {
    if (this.askedOnce.delete(key)) return true;
    // A second read is recognised within as many other reads as the cache has entries: a page read again only
    // after more would have been pushed out before its next read anyway. Measured (S9n): a wider window admits pages
    // of a long rotation that then only churn, and the churn costs more CPU and memory than the hits save.
    if (this.askedOnce.size >= this.limits.entries) this.askedOnce.clear();
    this.askedOnce.add(key);
    return false;
  }

  /** Drops every page of the conversations (erased or expired: their pages must not be served again). */
  forget(conversationIds: ReadonlySet<string>): void {
    for (const [k, e] of this.entries) if (conversationIds.has(k.slice(0, k.indexOf(":")))) this.drop(k, e);
    for (const k of this.askedOnce) if (conversationIds.has(k.slice(0, k.indexOf(":")))) this.askedOnce.delete(k);
  }

  /** Drops everything (when which conversations went is not known). */
  clear(): void {
    this.entries.clear();
    this.askedOnce.clear();
    this.chars = 0;
  }

  /** How many pages are remembered (for tests and the benchmark). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Keeps the form just made of the page. A form of a page remembered in another form joins it when the page read
   * is the one remembered (a message may have arrived since the count); nothing is kept past the budget.
   */
  private remember<T>(
    key: string,
    stored: StoredPage,
    offset: number,
    limit: number,
    form: PageForm<T>,
    built: T,
  ): void {
    let size = 0;
    for (const m of stored.messages) size += m.content.length + m.toolCalls.length + form.perMessage;
    if (size > this.limits.chars) return;
    const seen = stored.hasMore ? offset + limit + 1 : offset + stored.messages.length;
    let entry = this.entries.get(key);
    if (entry && entry.seen !== seen) return;
    if (!entry) {
      entry = { seen, hasMore: stored.hasMore, forms: new Map(), size: 0, lastAt: 0 };
      added(this.entries, key, entry);
    }
    if (entry.forms.has(form)) return;
    entry.forms.set(form, built);
    entry.size += size;
    this.chars += size;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.chars <= this.limits.chars) break;
      if (e !== entry) this.drop(k, e);
    }
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.chars -= e.size;
  }
}

/** The part of a message count a page of (offset, limit] can see; undefined (no such conversation) matches nothing. */
function clamp(count: number | undefined, offset: number, limit: number): number {
  if (count === undefined) return -1;
  return Math.min(Math.max(count, offset), offset + limit + 1);
}
