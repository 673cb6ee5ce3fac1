import { added, reused } from "./lru.js";
import type { ContactView } from "./repository.js";

/** One page of the contact list, as a reader sees it. */
export interface ContactPage {
  readonly contacts: readonly ContactView[];
  readonly hasMore: boolean;
}

/**
 * What a reader makes of a page (its encoded answer, say). A remembered page is kept in the forms its readers made
 * of it, made once and handed out again, so a form must never be changed.
 */
export interface ContactListForm<T> {
  build(page: ContactPage): T;
  /** What the form holds per contact, in characters' worth (measured). */
  readonly perContact: number;
}

/** What a page's key is made of: the account, and what its list asks (search last, the others without a line break). */
export interface PageKeyParts {
  readonly accountId: string;
  readonly filter: string;
  /** The view's assignee; "" for any. */
  readonly assignee: string;
  /** "" for any label. */
  readonly labelId: string;
  /** The hidden chatbots' ids, joined by commas. */
  readonly hidden: string;
  readonly limit: number;
  readonly offset: number;
  /** The folded search; "" for none. */
  readonly search: string;
}

/** A page as read from the store, with the latest `liveSince` at which it is still the answer. */
export interface LoadedPage {
  page: ContactPage;
  /** The page holds while liveSince ≤ this (Infinity: time changes nothing on it; -Infinity: never remember it). */
  liveUntil: number;
}

interface Entry {
  /** The account's list version the page was read at or after (ContactRepository.listVersion). */
  version: string;
  liveUntil: number;
  forms: Map<ContactListForm<unknown>, unknown>;
  size: number;
  /** When it was added or moved last in the cache's order (lru.ts). */
  lastAt: number;
}

/** How many pages, and roughly how many characters their forms hold, the cache keeps at most. */
export interface ContactListCacheLimits {
  entries: number;
  chars: number;
}

/**
 * An exact cache of contact list pages. A page is the answer to (account, filter, view's assignee, search, limit,
 * offset) at a list version, read in one statement before the page (so the page is at least as new as the version),
 * and at a time: conversations read closed once idle, so a page also holds only while `liveSince` has not passed
 * the activity of a live conversation it shows (or, for filter=live, selects). Every change to what a list shows
 * moves the version (the event counter, or the count of changes that record no event), on this instance or any
 * other, so a remembered page is served only while nothing committed since it was read could change it. Pages are
 * remembered from their second read (a search typed letter by letter reads each prefix once), least recently used
 * first out; an erasure or retention on any instance clears them all (no erased customer stays in memory).
 */
export class ContactListCache {
  private readonly entries = new Map<string, Entry>();
  /** Keys of pages read once lately and not remembered (yet). */
  private readonly askedOnce = new Set<string>();
  /** Each account's last page key, with its parts (keyOf). */
  private readonly keys = new Map<string, { parts: PageKeyParts; key: string }>();
  private chars = 0;

  /** Reads answered from here, and reads that built their page. */
  readonly counts = { hits: 0, misses: 0 };

  constructor(private readonly limits: ContactListCacheLimits = { entries: 512, chars: 4_000_000 }) {}

  /** The page in the reader's form: remembered when current at `version` and `liveSince`, else made from `load`. */
  async read<T>(
    key: string,
    version: string,
    liveSince: number,
    load: () => Promise<LoadedPage>,
    form: ContactListForm<T>,
  ): Promise<T> {
    return this.kept(key, version, liveSince, form) ?? this.load(key, version, liveSince, load, form);
  }

  /**
   * The remembered page in the reader's form when it is current at `version` and `liveSince`, without a promise (a
   * reader that has it answers at once); undefined when it must be made (`load`).
   */
  kept<T>(key: string, version: string, liveSince: number, form: ContactListForm<T>): T | undefined {
    const hit = this.entries.get(key);
    if (hit && hit.version === version && liveSince <= hit.liveUntil)
      return reused(this.entries, key, hit, form, this.counts) as T | undefined;
    return undefined;
  }

  /** The page in the reader's form, made from `load` unless remembered; remembered from its second read. */
  async load<T>(
    key: string,
    version: string,
    liveSince: number,
    load: () => Promise<LoadedPage>,
    form: ContactListForm<T>,
  ): Promise<T> {
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.version === version && liveSince <= hit.liveUntil) {
        const made = reused(this.entries, key, hit, form, this.counts);
        if (made !== undefined) return made as T;
      } else this.drop(key, hit);
    }
    this.counts.misses++;
    const loaded = await load();
    const built = form.build(loaded.page);
    if (loaded.liveUntil >= liveSince && (hit || this.admit(key))) this.remember(key, version, loaded, form, built);
    return built;
  }

  /**
   * The key of a page (what `read`, `kept` and `load` take): the same string object each time an account asks the same
   * page again. A key made anew (a string of some 60 characters, in pieces) was hashed, flattened and compared in
   * full by each lookup, 3k instructions a read (measured); the account's last key is compared by its parts instead.
   */
  keyOf(p: PageKeyParts): string {
    const last = this.keys.get(p.accountId);
    if (
      last !== undefined &&
      last.parts.filter === p.filter &&
      last.parts.assignee === p.assignee &&
      last.parts.labelId === p.labelId &&
      last.parts.hidden === p.hidden &&
      last.parts.limit === p.limit &&
      last.parts.offset === p.offset &&
      last.parts.search === p.search
    )
      return last.key;
    // The search goes last: the parts before it cannot hold a line break.
    const key = `${p.accountId}\n${p.filter}\n${p.assignee}\n${p.labelId}\n${p.hidden}\n${p.limit}\n${p.offset}\n${p.search}`;
    if (this.keys.size >= this.limits.entries) this.keys.clear();
    this.keys.set(p.accountId, { parts: p, key });
    return key;
  }

  /** Drops every page (an erasure or a retention run: no page may keep what they removed). */
  clear(): void {
    this.entries.clear();
    this.askedOnce.clear();
    this.keys.clear();
    this.chars = 0;
  }

  /** How many pages are remembered (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Whether a page read now is worth remembering: read once before, lately. */
  private admit(key: string): boolean {
    if (this.askedOnce.delete(key)) return true;
    if (this.askedOnce.size >= this.limits.entries) this.askedOnce.clear();
    this.askedOnce.add(key);
    return false;
  }

  /** Keeps the form just made; another form of the same page joins it only when read at the same version. */
  private remember<T>(key: string, version: string, loaded: LoadedPage, form: ContactListForm<T>, built: T): void {
    let size = 0;
    for (const c of loaded.page.contacts)
      size +=
        c.contactName.length +
        c.chatbotName.length +
        c.email.length +
        c.phoneNumber.length +
        c.userId.length +
        form.perContact;
    if (size > this.limits.chars) return;
    let entry = this.entries.get(key);
    if (entry && entry.version !== version) {
      this.drop(key, entry);
      entry = undefined;
    }
    if (!entry) {
      entry = { version, liveUntil: loaded.liveUntil, forms: new Map(), size: 0, lastAt: 0 };
      added(this.entries, key, entry);
    }
    if (entry.forms.has(form)) return;
    // Two reads at one version may have seen different instants: the entry holds for the earlier bound.
    entry.liveUntil = Math.min(entry.liveUntil, loaded.liveUntil);
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
