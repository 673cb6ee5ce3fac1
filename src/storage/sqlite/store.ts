import { AsyncLocalStorage } from "node:async_hooks";
import type Database from "better-sqlite3";
import type { LogAdvanced, Repositories, Store, StoreStats, UnitOptions } from "../../domain/store.js";
import { DURABLE } from "../../domain/store.js";
import { issueSessionIn } from "../../domain/token/credentials.js";
import type { SessionIssue, SessionIssued } from "../../domain/token/repository.js";
import type { TypingChannel } from "../../domain/typing/channel.js";
import { LogAdvances } from "../log-advances.js";
import { RepositoryMembers } from "../repository-members.js";
import { asyncRepository } from "../sync.js";
import { SqliteBulkLoader } from "./bulk.js";
import { Checkpointer, type CheckpointerOptions } from "./checkpointer.js";
import { type Db, type OpenOptions, openDatabase } from "./database.js";
import { type Fsync, WalSync } from "./durability.js";
import { storageError } from "./errors.js";
import { readinessProbe } from "./health.js";
import { type SqliteRepositories, sqliteRepositories } from "./repositories.js";

/** How the embedded back end opens its file. */
export interface SqliteStoreOptions {
  synchronous?: OpenOptions["synchronous"];
  busyTimeoutMs?: number;
  mustExist?: boolean;
  /** The group commit's fsync of the log (a test holds or fails it to see answers wait for it). */
  fsync?: Fsync;
  /** With group commit: checkpoints run on a worker thread (default), or false: by SQLite in the committing call. */
  checkpointer?: CheckpointerOptions | false;
}

const done = Promise.resolve();

type Statement = Database.Statement<[]>;

/** What a waiting unit of work is told: the mutex is its own, run in the open transaction, or start again. */
type Turn = "mutex" | "run" | "retry";

/**
 * The storage port on one SQLite file. better-sqlite3 is synchronous, so a single call never interleaves with
 * another; a unit of work whose callback awaits is one BEGIN IMMEDIATE … COMMIT holding an async mutex, and every
 * call from outside it waits for the mutex, so it neither joins nor sees the open transaction. With synchronous
 * FULL, commits are acknowledged before their fsync and `durable()` waits for a shared one (group commit).
 */
export class SqliteStore extends RepositoryMembers implements Store {
  /** The repositories as seen inside a unit of work (the mutex is already held). */
  private readonly inside: Repositories;
  /** The same for a self-contained unit: its event log refuses appends (nothing would announce them). */
  private readonly contained: Repositories;
  private readonly probe: () => boolean;
  private held = false;
  /** Units of work begun and not finished, waiting for the mutex included (nested ones join their outer unit). */
  private units = 0;
  /** A transaction of units of work is open (BEGIN done, COMMIT to come); it holds the mutex. */
  private open = false;
  /** A unit of work is running in the open transaction (units run one at a time). */
  private running = false;
  /** Units waiting to run in the open transaction: told "run" when it is their turn, "retry" when it was lost. */
  private readonly queued: ((turn: Turn) => void)[] = [];
  /** Units done in the open transaction, answered at its COMMIT. */
  private readonly done: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private commitSoon = false;
  /** Units of work wait (the checkpointer's last copy before the log starts over); other calls go on. */
  private holding = false;
  /** Marks the async context of the unit of work holding the mutex: a call from inside it must not wait for it. */
  private readonly unit = new AsyncLocalStorage<SqliteStore>();
  /** Waiting for the mutex, in order: calls from outside a unit, the checkpointer's hold, and units of work. */
  private readonly waiting: { unit: boolean; go: (turn: Turn) => void }[] = [];
  /** Appends to the event log, announced after their commit. */
  private readonly advances: LogAdvances;
  /** Checkpoints on a worker thread, off the event loop (group commit only). */
  private checkpointer: Checkpointer | undefined;
  /** The group commit's last wait handed out, and the same as `durable()` answers it (its errors typed). */
  private fsyncWait: Promise<void> | undefined;
  private durableWait: Promise<void> | undefined;
  /** The transaction's statements, prepared once (db.exec parses its text on every call). */
  private readonly tx: Record<"begin" | "commit" | "rollback" | "savepoint" | "release" | "rollbackTo", Statement>;

  constructor(
    readonly db: Db,
    private readonly walSync?: WalSync,
  ) {
    const sync = sqliteRepositories(db);
    const advances = new LogAdvances();
    const outside = wrapAll(sync, (fn) => (this.held && this.unit.getStore() !== this ? this.locked(fn) : attempt(fn)));
    // The outside view is called only once constructed: a call from outside a unit of work waits for the mutex.
    super({ ...outside, events: advances.announcing(outside.events) });
    this.advances = advances;
    const inside = wrapAll(sync, (fn) => attempt(fn));
    this.inside = { ...inside, events: advances.announcing(inside.events) };
    this.contained = { ...inside, events: refusingAppends(inside.events) };
    this.probe = readinessProbe(db);
    this.tx = {
      begin: db.prepare<[]>("BEGIN IMMEDIATE"),
      commit: db.prepare<[]>("COMMIT"),
      rollback: db.prepare<[]>("ROLLBACK"),
      savepoint: db.prepare<[]>("SAVEPOINT unit"),
      release: db.prepare<[]>("RELEASE unit"),
      rollbackTo: db.prepare<[]>("ROLLBACK TO unit"),
    };
  }

  /** Every unit of work is serial here (one writer at a time), whatever its options ask. */
  async transaction<T>(fn: (tx: Repositories) => Promise<T>, o?: UnitOptions): Promise<T> {
    // A unit of work inside another joins it (better-sqlite3 has no nested BEGIN; the outer one commits all).
    if (this.unit.getStore() === this) return fn(this.inside);
    this.units++;
    try {
      // A self-contained unit makes no call that must be told from others' and appends nothing to announce: it runs
      // outside both async contexts, which stay off (no hook on every promise) while only such units are open.
      return await (o?.selfContained
        ? this.serial(fn, this.contained)
        : this.advances.around(() => this.serial(fn, undefined)));
    } finally {
      // No unit open or waiting: the async contexts that tell a unit's own calls from others' are off until the next
      // one. While any AsyncLocalStorage is on, Node runs a hook on every promise the process makes (every request's,
      // not only the unit's: about 5% of a refresh's CPU).
      if (--this.units === 0) {
        this.unit.disable();
        this.advances.idle();
      }
    }
  }

  /** The domain's checks and writes in one unit of work, joining the group commit as every issue's does. */
  issueSession(s: SessionIssue): Promise<SessionIssued> {
    return this.transaction((tx) => issueSessionIn(tx, s), { selfContained: true });
  }

  /**
   * Runs one unit of work. Units share a transaction: the first opens it (BEGIN IMMEDIATE), each runs in a savepoint
   * of its own (a unit that fails is rolled back alone), and the transaction commits once no unit is running or
   * waiting, at the latest at the end of the event loop's turn. A unit is answered only after that COMMIT, so what it
   * reports is committed; calls from outside a unit wait for the COMMIT, so they never see a uncommitted row. Units
   * that arrive together (a burst of token issues) thus write each page they share once, in one commit, instead of
   * one commit each: about ten log frames (two write calls each) and four file locks per commit.
   */
  private async serial<T>(fn: (tx: Repositories) => Promise<T>, contained: Repositories | undefined): Promise<T> {
    await this.enter();
    let result: T;
    // The first unit of a transaction has no other unit's writes to keep: it runs without a savepoint (which copies
    // every page it changes into the statement journal), and if it fails the whole transaction is rolled back, the
    // units waiting to run in it starting a new one.
    const alone = this.done.length === 0;
    try {
      if (!alone) this.tx.savepoint.run();
      try {
        result = await (contained ? fn(contained) : this.unit.run(this, () => fn(this.inside)));
        if (!alone) this.tx.release.run();
      } catch (e) {
        if (this.db.inTransaction)
          if (alone) {
            this.tx.rollback.run();
            this.lost(e);
          } else {
            this.tx.rollbackTo.run();
            this.tx.release.run();
          }
        throw e;
      }
    } catch (e) {
      // An error that ends the whole transaction (a full disk, an I/O error) undoes the units done before it too.
      if (!this.db.inTransaction && this.open) this.lost(storageError(e));
      this.next();
      throw storageError(e);
    }
    const committed = new Promise<void>((resolve, reject) => this.done.push({ resolve, reject }));
    this.next();
    await committed;
    return result;
  }

  /** Makes this unit the one running in the open transaction, opening one (the mutex taken) when none is. */
  private async enter(): Promise<void> {
    for (;;) {
      let turn: Turn;
      if (this.open) {
        if (!this.running) {
          this.running = true;
          return;
        }
        turn = await new Promise<Turn>((r) => this.queued.push(r));
      } else if (!this.held && !this.holding) {
        this.held = true;
        turn = "mutex";
      } else turn = await new Promise<Turn>((go) => this.waiting.push({ unit: true, go }));
      if (turn === "run") return;
      // The transaction it waited to join was lost: start again.
      if (turn === "retry") continue;
      try {
        // IMMEDIATE takes the write lock first, so writers in other processes queue instead of failing midway.
        this.tx.begin.run();
      } catch (e) {
        this.release();
        throw storageError(e);
      }
      this.open = true;
      this.running = true;
      // Units queued for the mutex (behind a call from outside) join this transaction instead of opening their own.
      for (let i = 0; i < this.waiting.length; ) {
        const w = this.waiting[i]!;
        if (w.unit) {
          this.waiting.splice(i, 1);
          this.queued.push(w.go);
        } else i++;
      }
      return;
    }
  }

  /** The unit running has finished: the next waiting unit runs, or the transaction commits at the turn's end. */
  private next(): void {
    this.running = false;
    if (!this.open) return;
    const u = this.queued.shift();
    if (u) {
      this.running = true;
      u("run");
      return;
    }
    if (!this.commitSoon) {
      this.commitSoon = true;
      setImmediate(() => this.commit());
    }
  }

  private commit(): void {
    this.commitSoon = false;
    // A unit started since (it awaits inside): it schedules the commit again when it ends.
    if (this.running || !this.open) return;
    const done = this.done.splice(0);
    this.open = false;
    try {
      this.tx.commit.run();
    } catch (e) {
      if (this.db.inTransaction) this.tx.rollback.run();
      const err = storageError(e);
      for (const d of done) d.reject(err);
      this.release();
      return;
    }
    this.release();
    for (const d of done) d.resolve();
  }

  /** SQLite rolled the transaction back itself: the units done in it are not committed, those waiting start anew. */
  private lost(err: unknown): void {
    this.open = false;
    for (const d of this.done.splice(0)) d.reject(err);
    for (const u of this.queued.splice(0)) u("retry");
    this.release();
  }

  /** Moves WAL checkpoints to a worker thread (see Checkpointer); the store stops it at close. */
  checkpointInBackground(path: string, o?: CheckpointerOptions): Checkpointer {
    this.checkpointer = new Checkpointer(this.db, path, (fn) => this.holdingUnits(fn), o);
    return this.checkpointer;
  }

  durable(): Promise<void> {
    const wait = this.walSync?.durable();
    if (!wait) return DURABLE;
    // Every stream's event asks (eight streams of a conversation, in the same turn): one wait, mapped once.
    if (wait !== this.fsyncWait) {
      this.fsyncWait = wait;
      this.durableWait = wait.catch((e: unknown) => Promise.reject(storageError(e)));
    }
    return this.durableWait!;
  }

  async ready(): Promise<boolean> {
    try {
      return this.probe();
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // Units done and waiting for their commit are committed, not rolled back by the close.
    if (this.open && !this.running) this.commit();
    await this.checkpointer?.close();
    // Commits not yet answered for (a command's, the demo bootstrap's) reach the disk before the file closes.
    try {
      this.walSync?.flushSync();
      try {
        // Leaves a small file behind; a checkpoint that cannot run now (a bulk load's open statement) is done
        // by SQLite itself when the last connection closes.
        this.db.pragma("wal_checkpoint(TRUNCATE)");
      } catch {
        // see above
      }
    } finally {
      this.walSync?.close();
      this.db.close();
    }
  }

  /** SQLite serves one instance (several run on PostgreSQL): its own commits are all there is to hear of. */
  async onLogAdvanced(advanced: LogAdvanced): Promise<() => void> {
    return this.advances.listen(advanced);
  }

  /** One process serves the file: its own signals are all there are. */
  async sharedTyping(local: TypingChannel & { close(): void }): Promise<TypingChannel & { close(): void }> {
    return local;
  }

  /**
   * SQLite has no channel to announce a rotation on: never called. A rotation by another process (`aiagent keys
   * rotate`) is found by the key ring's refresh interval.
   */
  async onSigningKeysChanged(_changed: () => void): Promise<() => void> {
    return () => undefined;
  }

  /**
   * SQLite has no channel between processes: never called. This process's own revocations are followed at once by
   * the stream guard (after each revoking call); another process's (`aiagent tokens revoke`) on its interval.
   */
  async onCredentialsChanged(_changed: () => void): Promise<() => void> {
    return () => undefined;
  }

  /** One process holds the file: the service's own caches are told of an erasure directly, so nothing to hear. */
  async onConversationsErased(_erased: (conversationIds: string[] | undefined) => void): Promise<() => void> {
    return () => undefined;
  }

  /** One process holds the file (several instances need PostgreSQL), so no other can be running `name`: fn runs. */
  exclusive<T>(_name: string, fn: () => Promise<T>): Promise<T | undefined> {
    return fn();
  }

  async stats(): Promise<StoreStats> {
    const read = () =>
      this.db
        .prepare("SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'")
        .get() as { n: number; oldest: number | null };
    const outbox = await (this.held ? this.locked(read) : attempt(read));
    return {
      poolInUse: this.held ? 1 : 0,
      poolWaiting: this.waiting.length,
      unitRetries: 0,
      outboxPending: outbox.n,
      outboxOldestAt: outbox.oldest,
    };
  }

  /** The loader leaves WAL mode while it runs, which needs the file to itself: the background checkpointer stops. */
  async bulkLoader(): Promise<SqliteBulkLoader> {
    await this.checkpointer?.close();
    this.checkpointer = undefined;
    return new SqliteBulkLoader(this.db);
  }

  private async locked<T>(fn: () => T): Promise<T> {
    await this.acquire();
    try {
      return await attempt(fn);
    } finally {
      this.release();
    }
  }

  /** Runs fn once no unit of work is open, while new ones wait; calls outside a unit go on meanwhile. */
  private async holdingUnits(fn: () => Promise<void>): Promise<void> {
    await this.acquire();
    this.held = false;
    this.holding = true;
    try {
      await fn();
    } finally {
      this.holding = false;
      this.held = true;
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (!this.held && !this.holding) {
      this.held = true;
      return done;
    }
    return new Promise((resolve) => this.waiting.push({ unit: false, go: () => resolve() }));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next.go("mutex");
    else this.held = false;
  }
}

/** Opens (creating if needed) the SQLite file with group commit, as the service runs it. */
export function openSqliteStore(path: string, o: SqliteStoreOptions = {}): SqliteStore {
  const synchronous = o.synchronous ?? "FULL";
  const db = openDatabase(path, {
    synchronous,
    busyTimeoutMs: o.busyTimeoutMs,
    groupCommit: true,
    mustExist: o.mustExist,
  });
  const walSync = synchronous === "FULL" && path !== ":memory:" ? new WalSync(db, path, o.fsync) : undefined;
  const store = new SqliteStore(db, walSync);
  if (walSync && o.checkpointer !== false) store.checkpointInBackground(path, o.checkpointer);
  return store;
}

/** The event log of a self-contained unit of work: reads pass, appends are a programming error. */
function refusingAppends(events: Repositories["events"]): Repositories["events"] {
  const refuse = () => Promise.reject(new Error("a self-contained unit of work appends no event"));
  return { ...events, append: refuse, add: refuse };
}

function attempt<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(storageError(e));
  }
}

function wrapAll(sync: SqliteRepositories, run: <T>(fn: () => T) => Promise<T>): Repositories {
  return {
    accounts: asyncRepository(sync.accounts, run),
    apiKeys: asyncRepository(sync.apiKeys, run),
    chatbots: asyncRepository(sync.chatbots, run),
    refreshTokens: asyncRepository(sync.refreshTokens, run),
    launchCodes: asyncRepository(sync.launchCodes, run),
    signingKeys: asyncRepository(sync.signingKeys, run),
    contacts: asyncRepository(sync.contacts, run),
    conversations: asyncRepository(sync.conversations, run),
    search: asyncRepository(sync.search, run),
    labels: asyncRepository(sync.labels, run),
    timers: asyncRepository(sync.timers, run),
    demoSetup: asyncRepository(sync.demoSetup, run),
    members: asyncRepository(sync.members, run),
    invitations: asyncRepository(sync.invitations, run),
    profiles: asyncRepository(sync.profiles, run),
    pictures: asyncRepository(sync.pictures, run),
    attachments: asyncRepository(sync.attachments, run),
    notes: asyncRepository(sync.notes, run),
    mentions: asyncRepository(sync.mentions, run),
    mentionAlerts: asyncRepository(sync.mentionAlerts, run),
    activities: asyncRepository(sync.activities, run),
    savedReplies: asyncRepository(sync.savedReplies, run),
    teams: asyncRepository(sync.teams, run),
    routing: asyncRepository(sync.routing, run),
    presence: asyncRepository(sync.presence, run),
    events: asyncRepository(sync.events, run),
    webhooks: asyncRepository(sync.webhooks, run),
    idempotency: asyncRepository(sync.idempotency, run),
    audit: asyncRepository(sync.audit, run),
    privacy: asyncRepository(sync.privacy, run),
    ratings: asyncRepository(sync.ratings, run),
    replies: asyncRepository(sync.replies, run),
    reports: asyncRepository(sync.reports, run),
    credentialChanges: asyncRepository(sync.credentialChanges, run),
    knowledge: asyncRepository(sync.knowledge, run),
    agents: asyncRepository(sync.agents, run),
    approvals: asyncRepository(sync.approvals, run),
    drafts: asyncRepository(sync.drafts, run),
    mail: asyncRepository(sync.mail, run),
  };
}
