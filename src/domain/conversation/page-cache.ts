import type { MessageRecord } from "./repository.js";

/** One page of a conversation's messages, as the store reads it. */
export interface StoredPage {
  readonly messages: readonly MessageRecord[];
  readonly hasMore: boolean;
}

/** A page handed out by the cache; shared by every reader of it, so never changed. */
export interface MessagePage extends StoredPage {
  /**
   * What other layers derive from the page (its answer, say), kept and dropped with it; undefined when the cache
   * does not keep the page (it is read once: deriving anything for later would be wasted).
   */
  readonly derived: Map<symbol, unknown> | undefined;
}

interface Entry {
  page: MessagePage;
  /**
   * How many of the conversation's messages the page saw, clamped to what can change it: the messages of
   * (offset, offset + limit] and whether one more exists. Two counts with the same clamp give the same page.
   */
  seen: number;
  size: number;
}

/** How many entries, and roughly how many characters of message text, the cache keeps at most. */
export interface PageCacheLimits {
  entries: number;
  chars: number;
}

// What an entry holds per message, in characters' worth: its text twice (the records, and the encoded answer that
// rides along in `derived`) and the ids, times and objects around it (measured: about 600).
const PER_MESSAGE = 600;
const TEXT_COPIES = 2;

/**
 * An exact cache of message pages. Messages are immutable, never deleted, and numbered 1, 2, 3… without gaps, so
 * the page (conversation, offset, limit) depends on the conversation's message count only, and only within
 * [offset, offset + limit + 1]: a page with more after it never changes again and is served without asking the
 * store; the tail page is served when the current count, read in one lookup, gives the same clamp. A page is
 * remembered from its second read on; least recently used entries go first when either limit is reached. Sized from
 * the frame's re-read pattern (README, S9): an entry must outlive the distinct pages read between two re-reads of it.
 */
export class MessagePageCache {
  private readonly entries = new Map<string, Entry>();
  /** Keys of pages read once lately and not remembered (yet). */
  private readonly askedOnce = new Set<string>();
  private chars = 0;

  constructor(private readonly limits: PageCacheLimits = { entries: 256, chars: 8_000_000 }) {}

  /**
   * The page, from the cache when it is known to be current, else from `load` (remembered if read before). `count` reads the
   * conversation's current message count; it is called only for a remembered tail page.
   */
  async read(
    conversationId: string,
    offset: number,
    limit: number,
    count: () => Promise<number | undefined>,
    load: () => Promise<StoredPage>,
  ): Promise<MessagePage> {
    const key = `${conversationId}:${offset}:${limit}`;
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.page.hasMore || clamp(await count(), offset, limit) === hit.seen) {
        // Most recently used goes last in the map's order.
        this.entries.delete(key);
        this.entries.set(key, hit);
        return hit.page;
      }
      this.drop(key, hit);
    }
    const stored = await load();
    const kept = hit || this.admit(key) ? this.remember(key, stored, offset, limit) : undefined;
    return kept ?? { messages: stored.messages, hasMore: stored.hasMore, derived: undefined };
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

  /** How many pages are remembered (for tests and the benchmark). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Keeps the page just read and returns it as kept; none when it is too large, or when a concurrent read kept the
   * key first (that one is not replaced, and not answered here: it may have been read before this request began).
   */
  private remember(key: string, stored: StoredPage, offset: number, limit: number): MessagePage | undefined {
    if (this.entries.has(key)) return undefined;
    let size = 0;
    for (const m of stored.messages) size += TEXT_COPIES * (m.content.length + m.toolCalls.length) + PER_MESSAGE;
    if (size > this.limits.chars) return undefined;
    const page: MessagePage = { messages: stored.messages, hasMore: stored.hasMore, derived: new Map() };
    const seen = page.hasMore ? offset + limit + 1 : offset + page.messages.length;
    this.entries.set(key, { page, seen, size });
    this.chars += size;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.chars <= this.limits.chars) break;
      this.drop(k, e);
    }
    return page;
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
