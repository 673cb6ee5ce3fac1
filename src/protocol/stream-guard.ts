import { isDomainError } from "../domain/errors.js";
import { DONE, type Readiness, takeNow, whenReady } from "../domain/streams.js";
import type { CredentialChangeRepository } from "../domain/token/credential-changes.js";
import { type Call, type ClientGone, ForwardedCall } from "./call.js";

/**
 * The RPCs whose success may revoke a credential: before one answers, this instance reads the credential changes
 * (so its own streams are settled before the revocation's answer leaves).
 */
export const REVOKING_METHODS: ReadonlySet<string> = new Set([
  "ChangePassword",
  "RotateApiKeys",
  "RevokeApiKey",
  "DisableChatbot",
  "UpdateMember",
  "RemoveMember",
  "AcceptInvitation",
  "RevokeSessions",
  "RevokeSession",
]);
/**
 * The RPCs whose refusal may revoke a credential: a retired refresh token presented again ends its session, and the
 * call then fails. Their success revokes nothing, so only a refusal has this instance read the changes first.
 */
export const REVOKING_WHEN_REFUSED: ReadonlySet<string> = new Set(["RefreshToken"]);
/** How many events a stream reads ahead of its client, waiting to be cleared and sent. */
const MAX_AHEAD = 64;
/** How many credentials one full pass re-checks at once. */
const SWEEP_CONCURRENCY = 16;
/** A place skipped by a read (PostgreSQL: its transaction not committed yet) is asked for again this long. */
const MISSING_MS = 60_000;
/** At most this many places skipped at once are asked for again. */
const MAX_GAP = 1000;
/** Changes are kept this long in the log; older ones are deleted by the instances' sweeps. */
const KEEP_CHANGES_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 10 * 60_000;
/** A read of the changes that fails is tried again for this long before the streams waiting for it end. */
const OUTAGE_MS = 20_000;

/** The guard's timings (configuration: AIAGENT_STREAM_RECHECK_MS, AIAGENT_STREAM_RECHECK_ALL_MS). */
export interface GuardTimings {
  /** The safety net: the change log is read at least this often, and expiries are looked at (≤ 1000). */
  sweepMs: number;
  /** Every open credential is checked again in full this often, whatever the log says. */
  recheckAllMs: number;
}

/** What the gate found of a stream's credential, as the guard indexes it. */
export interface Holder {
  /** The credential-change subjects whose change may fail its check (credential-changes.ts). */
  subjects: readonly string[];
  /** When the token expires: the stream ends then, with the check's error. */
  expiresAt: number;
  /** Its validity can also lapse with time in a way no change records (an API key's grace): checked each sweep. */
  timeBound: boolean;
  /** `generation` read before the gate's check ran (see StreamGuard.generation). */
  generation: number;
}

export interface Group {
  key: string;
  /** The same check the gate ran when the stream opened; throws when the credential no longer passes. */
  recheck: () => Promise<unknown>;
  /** Its open streams: a verdict ends each of them. */
  streams: Set<{ revoke(e: unknown): void }>;
  holder: Holder;
  /** A check started after a change of one of its subjects was read: deliveries wait for it. */
  pending?: Promise<void> | undefined;
}

/** One read of the change log: started when `from` events had arrived. */
interface Sync {
  from: number;
  done: Promise<void>;
}

/**
 * Open streams obey the rule unary calls obey, without a database round trip per stream or per event.
 *
 * Every change of what a credential check reads (revocations of every kind, removed or re-roled members, disabled
 * chatbots, revoked API keys, closed accounts) is recorded by the back end in the changing transaction, in commit
 * order, under subjects that name whose credentials it may touch (credential-changes.ts). This guard indexes its
 * open streams by credential and by those subjects, and reads the changes added after its place: at once when told
 * (after a revoking call here, and on PostgreSQL on the NOTIFY the recording trigger sends), and every `sweepMs` as a
 * safety net (one indexed query, however many streams are open). A credential named by a change is checked again;
 * a verdict ends its streams with the check's error.
 *
 * The guarantee — no event written after a revocation reaches the revoked stream — holds by ordering: an event is
 * delivered only after a read of the change log that started after the event was read from the store (one read
 * serves every stream of the instance), and after the check of any credential that read named. An event committed
 * after a revocation was read after the revocation committed, so that read of the log sees the revocation.
 */
export class StreamGuard {
  private readonly groups = new Map<string, Group>();
  private readonly bySubject = new Map<string, Set<Group>>();
  private readonly timer: NodeJS.Timeout;
  /** The highest place read (-1: not yet known), and the places below it not seen yet, since when. */
  private place = -1;
  private readonly missing = new Map<number, number>();
  /** Raised whenever a read of the log applied changes: a stream admitted across it is checked again. */
  generation = 0;
  /** Events received so far, by every stream: orders each event against the reads of the log. */
  private received = 0;
  /** Events up to this number are cleared by a read of the log applied (their credential's check aside). */
  private clearedTo = 0;
  private current: (Sync & { running: boolean }) | undefined;
  private next: Sync | undefined;
  private sweeping: Promise<void> | undefined;
  private lastFull = Date.now();
  private lastPrune = 0;
  private readonly stops: (() => void)[] = [];
  /** Told the subjects of every change a read of the log applies (onChanges). */
  private readonly listeners: ((subjects: readonly string[] | undefined) => void)[] = [];
  /** Test hook: while set, notices of changes are ignored (as lost notifications): only the sweep finds them. */
  dropTold = false;

  constructor(
    private readonly changes: CredentialChangeRepository,
    private readonly t: GuardTimings,
  ) {
    this.timer = setInterval(() => void this.tick(), t.sweepMs);
    this.timer.unref();
  }

  /** Streams open now under the guard. */
  get open(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.streams.size;
    return n;
  }

  /**
   * Runs a stream under the guard: `open` gets a signal that aborts when the client goes (`signal`) and when the
   * credential dies; the stream then ends with the check's error, whatever the stream was waiting for. It also gets
   * the signal's controller: the stream may end its own work with it (a watch whose token expired) rather than make
   * another signal of its own.
   */
  run<T>(
    key: string,
    holder: Holder,
    recheck: () => Promise<unknown>,
    signal: AbortSignal | ClientGone,
    open: (signal: AbortSignal, stop: AbortController) => AsyncIterable<T>,
  ): AsyncIterableIterator<T> {
    const group = this.join(key, holder, recheck);
    const stream = new GuardedStream(this, group, signal, open);
    group.streams.add(stream);
    // The log was read (and applied) while the gate checked: the check may predate a change it did not see.
    if (holder.generation !== this.generation && !group.pending) this.suspect(group);
    return stream;
  }

  /** Numbers an event as it arrives (from any stream): orders it against the reads of the change log. */
  arrived(): number {
    return ++this.received;
  }

  /** True when the `n`th event may go now, with nothing to wait for (a read that started after it was applied). */
  isCleared(group: Group, n: number): boolean {
    return n <= this.clearedTo && !group.pending;
  }

  /** A stream of the group ended: the group goes with its last one. */
  ended(group: Group, stream: { revoke(e: unknown): void }): void {
    group.streams.delete(stream);
    if (group.streams.size === 0) this.leave(group);
  }

  /**
   * Reads the changes now (a revoking call here, a NOTIFY): resolves once they are applied (the checks they call
   * for are started; deliveries of the credentials they name wait for them).
   */
  told(): Promise<void> {
    if (this.dropTold) return Promise.resolve();
    return this.synced(++this.received);
  }

  /** The safety net's read of the change log (what the timer runs every `sweepMs`), whatever was told or dropped. */
  sweepLog(): Promise<void> {
    return this.synced(++this.received);
  }

  /** Re-checks every open credential now (the full pass; also every `recheckAllMs`). */
  sweep(): Promise<void> {
    this.sweeping ??= this.pass([...this.groups.values()]).finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /**
   * Calls `heard` with the subjects of the changes each read of the log applies (told, or the safety net's sweep),
   * or undefined when any may have changed (the first read, which only finds its place): another cache of what
   * credential checks read follows the same changes (access-tokens.ts, the keys seen valid).
   */
  onChanges(heard: (subjects: readonly string[] | undefined) => void): void {
    this.listeners.push(heard);
  }

  /** Runs `stop` at close (the channel that tells of changes). */
  stopWith(stop: () => void): void {
    this.stops.push(stop);
  }

  close(): void {
    clearInterval(this.timer);
    for (const stop of this.stops.splice(0)) stop();
  }

  /** What the `n`th event waits for next: the read of the log after it, or its credential's check. */
  clearing(group: Group, n: number): Promise<void> {
    return group.pending ? this.cleared(group, n) : this.synced(n);
  }

  /** Resolves when an event (the `n`th) may go: the log was read after it arrived, and its credential cleared. */
  private async cleared(group: Group, n: number): Promise<void> {
    await this.synced(n);
    while (group.pending) await group.pending;
  }

  /** Resolves once a read of the log that started after event `n` arrived has been applied. */
  private synced(n: number): Promise<void> {
    if (this.current && this.current.from >= n) return this.current.done;
    if (!this.current?.running) return this.start().done;
    if (!this.next) {
      let go!: () => void;
      const gate = new Promise<void>((r) => {
        go = r;
      });
      const next: Sync = { from: Number.POSITIVE_INFINITY, done: gate.then(() => this.start(next).done) };
      next.done.catch(() => undefined);
      this.next = next;
      void this.current.done.catch(() => undefined).finally(go);
    }
    return this.next.done;
  }

  private start(queued?: Sync): Sync & { running: boolean } {
    if (queued && this.next === queued) this.next = undefined;
    const s: Sync & { running: boolean } = { from: this.received, done: Promise.resolve(), running: true };
    s.done = this.readLog().then(
      () => {
        s.running = false;
        if (s.from > this.clearedTo) this.clearedTo = s.from;
      },
      (e: unknown) => {
        s.running = false;
        throw e;
      },
    );
    s.done.catch(() => undefined);
    this.current = s;
    return s;
  }

  /** One read of the change log, applied; tried again while the store is away, up to OUTAGE_MS. */
  private async readLog(): Promise<void> {
    const start = Date.now();
    let pause = 50;
    for (;;) {
      try {
        return await this.readOnce();
      } catch (e) {
        if (isDomainError(e) && e.kind !== "unavailable") throw e;
        if (Date.now() - start + pause > OUTAGE_MS) throw e;
        await new Promise((r) => setTimeout(r, pause));
        pause = Math.min(pause * 2, 1000);
      }
    }
  }

  private async readOnce(): Promise<void> {
    if (this.place < 0) {
      // Started: what was recorded before now was seen by the checks of the streams open (the gate's, below).
      const last = await this.changes.last();
      if (this.place < 0) {
        this.place = last;
        this.generation++;
        for (const g of this.groups.values()) this.suspect(g);
        for (const heard of this.listeners) heard(undefined);
      }
      return;
    }
    const now = Date.now();
    for (const [seq, since] of this.missing) if (now - since > MISSING_MS) this.missing.delete(seq);
    const got = await this.changes.since(this.place, [...this.missing.keys()]);
    if (got.length === 0) return;
    const named = new Set<Group>();
    for (const c of got) {
      this.missing.delete(c.seq);
      if (c.seq > this.place) {
        // A jump of more than MAX_GAP (a sequence's cache lost in a crash) is not a set of open transactions.
        if (c.seq - this.place <= MAX_GAP) for (let s = this.place + 1; s < c.seq; s++) this.missing.set(s, now);
        this.place = c.seq;
      }
      for (const g of this.bySubject.get(c.subject) ?? []) named.add(g);
    }
    this.generation++;
    for (const g of named) this.suspect(g);
    if (this.listeners.length > 0) {
      const subjects = got.map((c) => c.subject);
      for (const heard of this.listeners) heard(subjects);
    }
  }

  /** Checks the group's credential again now; its deliveries wait for the outcome. */
  private suspect(group: Group): void {
    const p: Promise<void> = this.check(group).finally(() => {
      if (group.pending === p) group.pending = undefined;
    });
    p.catch(() => undefined);
    group.pending = p;
  }

  private check(group: Group): Promise<void> {
    const done = group.recheck().then(
      () => undefined,
      (e: unknown) => {
        if (isVerdict(e)) for (const s of group.streams) s.revoke(e);
        throw e;
      },
    );
    done.catch(() => undefined);
    return done;
  }

  /** The timer: the change log (safety net), expiries, time-bound credentials, the full pass, pruning. */
  private async tick(): Promise<void> {
    const now = Date.now();
    for (const g of this.groups.values())
      if (!g.pending && (g.holder.expiresAt <= now || g.holder.timeBound)) this.suspect(g);
    if (now - this.lastFull >= this.t.recheckAllMs) {
      this.lastFull = now;
      void this.sweep();
    }
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      void this.changes.prune(now - KEEP_CHANGES_MS).catch(() => undefined);
    }
    await this.sweepLog().catch(() => undefined);
  }

  private async pass(queue: Group[]): Promise<void> {
    const worker = async () => {
      // Only a verdict on the credential ends streams; a storage hiccup is retried at the next pass.
      for (let g = queue.shift(); g; g = queue.shift()) await this.check(g).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, queue.length) }, worker));
  }

  private join(key: string, holder: Holder, recheck: () => Promise<unknown>): Group {
    let group = this.groups.get(key);
    if (group) return group;
    group = { key, recheck, streams: new Set(), holder };
    this.groups.set(key, group);
    for (const s of holder.subjects) {
      let set = this.bySubject.get(s);
      if (!set) this.bySubject.set(s, (set = new Set()));
      set.add(group);
    }
    return group;
  }

  private leave(group: Group): void {
    if (this.groups.get(group.key) !== group) return;
    this.groups.delete(group.key);
    for (const s of group.holder.subjects) {
      const set = this.bySubject.get(s);
      set?.delete(group);
      if (set?.size === 0) this.bySubject.delete(s);
    }
  }
}

/**
 * One stream under the guard. It reads ahead of its client by at most MAX_AHEAD events (bounded memory), so that one
 * read of the change log clears every event that arrived before it started: a backlog costs a read per batch, not per
 * event. An event already cleared goes at once. Not a generator (see domain/streams.ts). Caught up, it waits on its
 * inner stream's callback (Readiness) and takes what that hands at once: an event then costs a reaction on the shared
 * read of the change log, and no promise of its own; otherwise it holds one read of the inner stream.
 */
class GuardedStream<T> implements AsyncIterableIterator<T>, Readiness<T> {
  private readonly it: AsyncIterator<T>;
  /**
   * The inner stream's signal: aborted when the client goes, when the credential's verdict comes, and when this stream
   * ends however (the inner stream, read ahead of, winds down and frees its slots). One controller and one listener on
   * the client's signal: each AbortSignal costs about 0.8 KB of heap, an `AbortSignal.any` of three another 1.7 KB,
   * kept while the stream is open (docs/live-updates.md, session 22).
   */
  private readonly stop = new AbortController();
  /** The credential's verdict: the stream ends with it. */
  private verdict: { e: unknown } | undefined;
  private readonly ahead: { value: T; n: number }[] = [];
  private reading = false;
  /** Waiting for the inner stream to say it has something (pull). */
  private asking = false;
  /** The inner stream ended (done), or failed with `failure`. */
  private finished = false;
  private failure: { e: unknown } | undefined;
  /** A wait for the head's clearance is in flight; it failed with `broken` (the stream then fails). */
  private clearing = false;
  private broken: { e: unknown } | undefined;
  private closed = false;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  /** Told once the head may go or the stream ended (Readiness). */
  private ready: (() => void) | undefined;
  private readonly onItem = (r: IteratorResult<T>) => {
    this.reading = false;
    if (r.done) this.finished = true;
    else {
      this.ahead.push({ value: r.value, n: this.guard.arrived() });
      this.pull();
    }
    this.settle();
  };
  private readonly onFailure = (e: unknown) => {
    this.reading = false;
    this.finished = true;
    this.failure = { e };
    this.settle();
  };
  private readonly onCleared = () => {
    this.clearing = false;
    this.settle();
  };
  private readonly onNotCleared = (e: unknown) => {
    this.clearing = false;
    this.broken = { e };
    this.settle();
  };
  /** The inner stream said it has something: taken at once when it can hand it, else read. */
  private readonly read = () => {
    this.asking = false;
    if (this.reading || this.finished || this.closed || this.ahead.length >= MAX_AHEAD) return;
    const had = this.ahead.length;
    this.fillNow();
    if (this.ahead.length === had && !this.finished) {
      this.reading = true;
      this.it.next().then(this.onItem, this.onFailure);
      return;
    }
    this.pull();
    this.settle();
  };

  /** The client went: the inner stream winds down (its end, not a failure, ends this one). */
  private readonly onGone = () => this.stop.abort(this.client instanceof AbortSignal ? this.client.reason : undefined);

  constructor(
    private readonly guard: StreamGuard,
    private readonly group: Group,
    /** The client's signal, or (a JSON route) its call, which says when it went with no signal of its own. */
    private readonly client: AbortSignal | ClientGone,
    open: (signal: AbortSignal, stop: AbortController) => AsyncIterable<T>,
  ) {
    if (!(client instanceof AbortSignal)) client.onClientGone(this.onGone);
    else if (client.aborted) this.stop.abort(client.reason);
    else client.addEventListener("abort", this.onGone, { once: true });
    this.it = open(this.stop.signal, this.stop)[Symbol.asyncIterator]();
  }

  /** The credential's verdict: the stream's waits end with it, whatever they wait for. */
  revoke(e: unknown): void {
    if (this.verdict) return;
    this.verdict = { e };
    this.fail(e);
    this.fire();
    // Then the inner stream winds down (already, if the reader was answered and the stream closed).
    this.stop.abort(e);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  whenReady(cb: () => void): void {
    this.ready = cb;
    if (this.closed || this.verdict) this.fire();
    else {
      this.pull();
      this.settle();
    }
  }

  takeNow(): IteratorResult<T> | undefined {
    if (this.closed) return DONE;
    if (this.verdict) {
      this.close();
      throw this.verdict.e;
    }
    if (this.waiter) return undefined;
    this.fillNow();
    const r = this.now();
    this.pull();
    return r;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.closed) return Promise.resolve(DONE);
    if (this.verdict) {
      this.close();
      return Promise.reject(this.verdict.e);
    }
    const p = new Promise<IteratorResult<T>>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
    this.pull();
    this.advance();
    return p;
  }

  return(): Promise<IteratorResult<T>> {
    const w = this.waiter;
    this.waiter = undefined;
    this.close();
    w?.resolve(DONE);
    return Promise.resolve(DONE);
  }

  /**
   * Keeps the inner stream read while there is room ahead: once it says it has something (Readiness), so that a
   * caught-up stream holds callbacks rather than a pending `next` in every layer; a backlog is read ahead at once.
   */
  private pull(): void {
    if (this.reading || this.asking || this.finished || this.closed || this.ahead.length >= MAX_AHEAD) return;
    this.asking = true;
    whenReady(this.it, this.read);
  }

  /** Takes what the inner stream hands at once, numbered as it arrives, while there is room ahead. */
  private fillNow(): void {
    while (!this.reading && !this.finished && !this.closed && this.ahead.length < MAX_AHEAD) {
      let r: IteratorResult<T> | undefined;
      try {
        r = takeNow<T>(this.it);
      } catch (e) {
        this.finished = true;
        this.failure = { e };
        return;
      }
      if (!r) return;
      if (r.done) this.finished = true;
      else this.ahead.push({ value: r.value, n: this.guard.arrived() });
    }
  }

  /**
   * What the reader gets now: the head once cleared (its clearance started when it must wait: undefined), or the
   * stream's end (DONE, or thrown: its failure, the credential's verdict). The caller pulls again after.
   */
  private now(): IteratorResult<T> | undefined {
    if (this.broken) {
      this.close();
      throw this.broken.e;
    }
    const head = this.ahead[0];
    if (!head) {
      if (!this.finished) return undefined;
      if (this.failure) {
        this.close();
        throw this.failure.e;
      }
      if (this.verdict) {
        this.close();
        throw this.verdict.e;
      }
      this.close(true);
      return DONE;
    }
    if (!this.guard.isCleared(this.group, head.n)) {
      if (!this.clearing) {
        this.clearing = true;
        // The shared read's own promise when no check is pending (looked at again once it is applied).
        this.guard.clearing(this.group, head.n).then(this.onCleared, this.onNotCleared);
      }
      return undefined;
    }
    this.ahead.shift();
    return { done: false, value: head.value };
  }

  /** Something changed (an item, the end, a clearance): the waiting reader is answered, or the one told is. */
  private settle(): void {
    this.advance();
    if (!this.ready || this.closed) return;
    const head = this.ahead[0];
    if (this.broken || (head ? this.guard.isCleared(this.group, head.n) : this.finished)) this.fire();
    else if (head) this.now();
  }

  private fire(): void {
    const r = this.ready;
    this.ready = undefined;
    r?.();
  }

  /** Answers the waiting reader if it can be: the head once cleared, else the inner stream's end. */
  private advance(): void {
    const w = this.waiter;
    if (!w || this.closed) return;
    let r: IteratorResult<T> | undefined;
    try {
      r = this.now();
    } catch (e) {
      this.waiter = undefined;
      w.reject(e);
      return;
    }
    if (!r) return;
    this.waiter = undefined;
    w.resolve(r);
    // After the answer: a read the pull starts at once cannot answer this reader a second time.
    this.pull();
  }

  private fail(e: unknown): void {
    const w = this.waiter;
    if (!w || this.closed) return;
    this.waiter = undefined;
    this.close();
    w.reject(e);
  }

  /** Ends the stream: the inner one winds down on its own (its signal aborted), not waited for. */
  private close(done = false): void {
    if (this.closed) return;
    this.closed = true;
    this.ahead.length = 0;
    if (this.client instanceof AbortSignal) this.client.removeEventListener("abort", this.onGone);
    else this.client.offClientGone(this.onGone);
    this.stop.abort();
    if (!done) void this.it.return?.(undefined)?.catch(() => undefined);
    this.guard.ended(this.group, this);
  }
}

/** A failure that says the credential no longer passes (rather than that it could not be checked). */
function isVerdict(e: unknown): boolean {
  return isDomainError(e) && (e.kind === "unauthenticated" || e.kind === "permission_denied");
}

/** The call as a re-check sees it: the stream's answer headers are sent, so nothing more is set on them. */
export function recheckCall(call: Call): Call {
  return new RecheckCall(call);
}

/** A class, and its signal asked for only when a check needs it (a JSON call's signal is made on demand). */
class RecheckCall extends ForwardedCall {
  override setResponseHeader(): void {}
}
