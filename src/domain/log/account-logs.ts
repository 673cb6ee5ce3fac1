import { DomainError } from "../errors.js";
import { LATER } from "../streams.js";
import type { ConversationEvent, EventListener, EventTopic, PlacedEntries } from "./events.js";
import type { EventRecord, EventRepository } from "./repository.js";

/** Tunables of the readers (tests shorten them). */
export interface LogTimings {
  /** An account's log is read at least this often while streams follow it, even without a hint (one may be lost). */
  lookEveryMs: number;
  /** The store unavailable this long ends the followers with `unavailable`: a client resumes from its cursor. */
  outageMs: number;
}

export const LOG_TIMINGS: LogTimings = { lookEveryMs: 10_000, outageMs: 20_000 };

/** What the readers listen to and read. */
export interface AccountLogDeps {
  /** The hints that an account's log advanced (LogFeed), and every advance, whichever account (the followers of all). */
  feed: {
    subscribe(topic: EventTopic, listener: EventListener): () => void;
    onAccounts(l: (changes: readonly ConversationEvent[] | undefined) => void): () => void;
  };
  history: Pick<EventRepository, "list" | "lastSeq">;
}

/** What one follower takes of its account's log. */
export interface FollowOptions {
  /** Only this conversation's entries (indexed: handing an entry costs only the followers it concerns). */
  conversationId?: string;
  /** Whether it takes the entry (its type, what its caller may see). */
  accepts(e: EventRecord): boolean;
  /** When it reads the store itself (catching up): only these types (empty: all). */
  types?: readonly string[];
  /** A resumed follower whose next place was pruned fails (it cannot be told what it missed). */
  strict?: boolean;
  /** The most entries it holds unread; past it, it reads the store itself again until it is current. */
  maxQueue?: number;
  /** Kept by the safety timer's reads (streams); a follower of every account (offline replies) is not. */
  timed?: boolean;
}

export const PAGE = 100;
const MAX_QUEUE = 512;
/** The safety timer runs this many times per `lookEveryMs`, each time reading that share of the accounts. */
const SLICES = 8;

/**
 * One reader per account that something follows: every new page of the account's log is read once, and its
 * entries are handed to the account's followers (its open streams, the offline-reply follower), each taking what it
 * may see. Ref-counted: the reader and its hint subscription exist while it has followers. One timer for every
 * reader reads each followed log at least every `lookEveryMs` (a hint may be lost).
 *
 * A follower keeps its own place. It is *fed* once the reader's pages reach it: every entry the reader hands after
 * it joined (or after it last caught up) is put in its bounded queue, and it takes them after its place. A follower
 * behind the reader (a resumed stream, one whose queue overflowed) reads the store itself from its place, in
 * pages, up to where its queue starts or the reader is: memory is bounded however large the backlog.
 */
export class AccountLogs {
  private readonly readers = new Map<string, AccountReader>();
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  /**
   * Reads of the logs done by the readers (shared) and by followers catching up (their own), and this process's
   * placings handed on without a read (handed).
   */
  readonly counts = { shared: 0, own: 0, handed: 0 };

  constructor(
    readonly d: AccountLogDeps,
    readonly t: LogTimings = LOG_TIMINGS,
  ) {}

  /**
   * A follower of the account's log: joined before it resolves, so an entry the reader reads from then on reaches
   * it. `start(place)` sets where it takes up (entries at or before it are skipped); `close()` leaves.
   */
  async follow(accountId: string, o: FollowOptions, signal: AbortSignal): Promise<LogFollower> {
    for (;;) {
      let r = this.readers.get(accountId);
      if (!r) {
        r = new AccountReader(this, accountId);
        this.readers.set(accountId, r);
        this.timing();
      }
      const reader = r;
      try {
        await reader.ready;
      } catch (e) {
        if (reader.followers === 0) this.drop(reader);
        throw e;
      }
      // Dropped while its place was taken (its last follower left, the store failed): a new one is made.
      if (this.readers.get(accountId) === reader) return reader.join(o, signal);
    }
  }

  /** Calls `l` with the accounts whose logs advanced (undefined: any may have), as the feed tells them. */
  onAccounts(l: (changes: readonly ConversationEvent[] | undefined) => void): () => void {
    return this.d.feed.onAccounts(l);
  }

  /** Accounts whose log is followed now (tests, metrics). */
  get accounts(): number {
    return this.readers.size;
  }

  /** True when no reader is reading or has a hint it did not read yet. */
  get quiet(): boolean {
    for (const r of this.readers.values()) if (r.busy || r.dirty) return false;
    return true;
  }

  /** Stops the safety timer (at close; the feed's close ends the followers). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** @internal */
  drop(r: AccountReader): void {
    if (this.readers.get(r.accountId) === r) this.readers.delete(r.accountId);
    r.stop();
    if (this.readers.size === 0) this.close();
  }

  private timing(): void {
    if (this.timer) return;
    this.timer = setInterval(
      () => {
        // One share of the readers each tick: 20,000 followed accounts never all read in the same instant.
        const slice = this.tick++ % SLICES;
        let i = 0;
        for (const r of this.readers.values()) if (i++ % SLICES === slice && r.timed > 0) r.changed();
      },
      Math.max(1, Math.floor(this.t.lookEveryMs / SLICES)),
    );
    this.timer.unref();
  }

  /** A read of the store, tried again while it is unavailable, up to the outage bound; then failed, typed. */
  async retrying<T>(read: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const start = Date.now();
    let pause = 100;
    for (;;) {
      try {
        return await read();
      } catch (e) {
        if (e instanceof DomainError && e.kind !== "unavailable") throw e;
        if (signal?.aborted || Date.now() - start + pause > this.t.outageMs)
          throw new DomainError("unavailable", "live updates are unavailable: watch again from the last cursor", {
            cause: e,
          });
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 2000);
      }
    }
  }
}

/** The shared reader of one account's log. */
class AccountReader implements EventListener {
  /** The place of the last entry handed to the followers. */
  seq = 0;
  readonly ready: Promise<void>;
  busy = false;
  dirty = false;
  timed = 0;
  private readonly all = new Set<LogFollower>();
  private readonly byConversation = new Map<string, Set<LogFollower>>();
  private readonly unsubscribe: () => void;
  private initialised = false;
  private stopped = false;
  private isClosed = false;

  constructor(
    private readonly logs: AccountLogs,
    readonly accountId: string,
  ) {
    // Subscribed before the log's place is taken: a hint meanwhile is read once the place is known.
    this.unsubscribe = logs.d.feed.subscribe({ accountId }, this);
    this.ready = logs
      .retrying(() => logs.d.history.lastSeq(accountId))
      .then((seq) => {
        this.seq = seq;
        this.initialised = true;
        if (this.dirty) void this.read();
      });
    this.ready.catch(() => undefined);
  }

  /** Followers joined now (counted as they join and leave: a stream's leaving costs nothing per other stream). */
  followers = 0;

  join(o: FollowOptions, signal: AbortSignal): LogFollower {
    const f = new LogFollower(this, this.logs, o, signal, this.seq);
    if (this.isClosed) f.end();
    if (o.conversationId !== undefined) {
      let set = this.byConversation.get(o.conversationId);
      if (!set) this.byConversation.set(o.conversationId, (set = new Set()));
      set.add(f);
    } else this.all.add(f);
    this.followers++;
    if (o.timed !== false) this.timed++;
    return f;
  }

  leave(f: LogFollower): void {
    const id = f.o.conversationId;
    let removed: boolean;
    if (id !== undefined) {
      const set = this.byConversation.get(id);
      removed = set?.delete(f) ?? false;
      if (set?.size === 0) this.byConversation.delete(id);
    } else removed = this.all.delete(f);
    if (removed) this.followers--;
    if (removed && f.o.timed !== false) this.timed--;
    if (this.followers === 0) this.logs.drop(this);
  }

  changed(placed?: PlacedEntries): void {
    // This process's placing, just after the reader's place: its entries are handed on without reading them back
    // (the places are dense, so they are what the read would answer). Told once per conversation of the placing.
    if (placed && placed.accountId === this.accountId && this.initialised && !this.busy && !this.dirty) {
      if (placed.lastSeq <= this.seq) return;
      if (placed.firstSeq === this.seq + 1) {
        this.logs.counts.handed++;
        this.hand(placed.entries());
        return;
      }
    }
    this.dirty = true;
    if (this.initialised && !this.busy) void this.read();
  }

  closed(): void {
    this.isClosed = true;
    for (const f of this.every()) f.end();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }

  /** Reads every page after the reader's place, once, and hands each entry to the followers that take it. */
  private async read(): Promise<void> {
    this.busy = true;
    try {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        for (;;) {
          const page = await this.logs.retrying(() => {
            this.logs.counts.shared++;
            return this.logs.d.history.list(this.accountId, this.seq, PAGE, []);
          });
          if (this.stopped) return;
          this.hand(page);
          if (page.length < PAGE) break;
        }
      }
    } catch (e) {
      // The store stayed away past the outage bound: every follower ends with it (clients resume from their cursor).
      for (const f of this.every()) f.fail(e);
      this.logs.drop(this);
    } finally {
      this.busy = false;
    }
  }

  private hand(page: readonly EventRecord[]): void {
    for (const e of page) {
      if (e.seq <= this.seq) continue;
      this.seq = e.seq;
      for (const f of this.all) f.offer(e);
      const set = this.byConversation.get(e.orderKey);
      if (set) for (const f of set) f.offer(e);
    }
  }

  private every(): LogFollower[] {
    const out = [...this.all];
    for (const s of this.byConversation.values()) out.push(...s);
    return out;
  }
}

/** One follower of an account's log (see AccountLogs). */
export class LogFollower {
  /** The place of the last entry taken (set by `start`). */
  pos = 0;
  private queue: EventRecord[] = [];
  /** Entries the reader hands after this place reach the queue; undefined: not fed (reads the store itself). */
  private fedFrom: number | undefined;
  private started = false;
  private first = true;
  private ended = false;
  private failure: { e: unknown } | undefined;
  private wake: (() => void) | undefined;
  /** Told once `next` is worth calling (Readiness, domain/streams.ts): a current follower waits on it, not on `next`. */
  private ready: (() => void) | undefined;
  private readonly onAbort = () => this.end();
  private readonly max: number;

  constructor(
    private readonly reader: AccountReader,
    private readonly logs: AccountLogs,
    readonly o: FollowOptions,
    private readonly signal: AbortSignal,
    fedFrom: number,
  ) {
    this.fedFrom = fedFrom;
    this.max = o.maxQueue ?? MAX_QUEUE;
    if (signal.aborted) this.ended = true;
    else signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Takes up after `place`: what it took or was sent before. */
  start(place: number): void {
    this.pos = place;
    this.started = true;
    this.woken();
  }

  /** True when it is current: fed, nothing queued after its place. */
  get current(): boolean {
    return (
      this.started &&
      this.fedFrom !== undefined &&
      this.pos >= this.fedFrom &&
      (this.queue.length === 0 || this.queue.at(-1)!.seq <= this.pos)
    );
  }

  /** The reader hands it an entry of its account (of its conversation, when it follows one). */
  offer(e: EventRecord): void {
    if (this.fedFrom === undefined || !this.o.accepts(e)) return;
    if (this.started && e.seq <= this.pos) return;
    if (this.queue.length >= this.max) {
      // Too far behind: the queue is dropped and the follower reads the store itself from its place.
      this.queue = [];
      this.fedFrom = undefined;
    } else this.queue.push(e);
    this.woken();
  }

  /** Calls `cb` once `next` has something to give (or the follower ended); at once unless it is current. */
  whenReady(cb: () => void): void {
    if (this.current && !this.ended && !this.failure && !this.signal.aborted) this.ready = cb;
    else cb();
  }

  private woken(): void {
    this.wake?.();
    const r = this.ready;
    this.ready = undefined;
    r?.();
  }

  end(): void {
    this.ended = true;
    this.woken();
  }

  fail(e: unknown): void {
    this.failure = { e };
    this.woken();
  }

  close(): void {
    this.signal.removeEventListener("abort", this.onAbort);
    this.ended = true;
    this.queue = [];
    this.reader.leave(this);
  }

  /**
   * The next entries after its place that it takes, in log order; waits while there are none. Undefined once it
   * ended (the signal aborted, the feed closed).
   */
  async next(): Promise<EventRecord[] | undefined> {
    for (;;) {
      const now = this.takeNow();
      if (now !== LATER) return now;
      if (!this.started || (this.fedFrom !== undefined && this.pos >= this.fedFrom)) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      const out = await this.catchUp();
      if (out.length > 0) return out;
    }
  }

  /**
   * What `next` would answer without waiting: the queued entries after its place, or undefined once it ended;
   * LATER when it must wait for an entry or read the store (the push path: domain/streams.ts).
   */
  takeNow(): EventRecord[] | undefined | typeof LATER {
    if (this.failure) throw this.failure.e;
    if (this.ended || this.signal.aborted) return undefined;
    const fed = this.fedFrom;
    if (!this.started || fed === undefined || this.pos < fed) return LATER;
    this.first = false;
    const q = this.queue;
    let i = 0;
    while (i < q.length && q[i]!.seq <= this.pos) i++;
    this.queue = [];
    if (i === q.length) return LATER;
    const out = i === 0 ? q : q.slice(i);
    this.pos = out.at(-1)!.seq;
    return out;
  }

  /** One page read from the store after its place (behind the reader, or not fed). */
  private async catchUp(): Promise<EventRecord[]> {
    const from = this.pos;
    // Where the reader was before this read: a page shorter than asked covers everything up to it.
    const readerAt = this.reader.seq;
    const page = await this.logs.retrying(() => {
      this.logs.counts.own++;
      return this.logs.d.history.list(this.reader.accountId, from, PAGE, this.o.types ?? []);
    }, this.signal);
    if (this.pos !== from) return [];
    if (this.first && this.o.strict && from > 0 && page.length > 0 && page[0]!.seq !== from + 1)
      throw new DomainError("failed_precondition", "after_cursor is older than the event log keeps: list again");
    this.first = false;
    // Fed meanwhile from a place: what is past it comes from the queue.
    const cap = this.fedFrom;
    const take = cap === undefined ? page : page.filter((e) => e.seq <= cap);
    if (take.length > 0) this.pos = take.at(-1)!.seq;
    if (cap !== undefined) {
      if (take.length < page.length || page.length < PAGE) this.pos = Math.max(this.pos, cap);
    } else if (page.length < PAGE) {
      this.pos = Math.max(this.pos, readerAt);
      // At or past the reader: fed again from here (nothing is handed in between); else it read on meanwhile.
      if (this.pos >= this.reader.seq) {
        this.fedFrom = this.reader.seq;
        this.queue = [];
      }
    }
    return take.filter((e) => this.o.accepts(e));
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
