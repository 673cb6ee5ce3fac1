import { AsyncLocalStorage } from "node:async_hooks";
import type { LogAdvanced, Repositories, Store, StoreStats, UnitOptions } from "../../domain/store.js";
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

/**
 * The storage port on one SQLite file. better-sqlite3 is synchronous, so a single call never interleaves with
 * another; a unit of work whose callback awaits is one BEGIN IMMEDIATE … COMMIT holding an async mutex, and every
 * call from outside it waits for the mutex, so it neither joins nor sees the open transaction. With synchronous
 * FULL, commits are acknowledged before their fsync and `durable()` waits for a shared one (group commit).
 */
export class SqliteStore extends RepositoryMembers implements Store {
  /** The repositories as seen inside a unit of work (the mutex is already held). */
  private readonly inside: Repositories;
  private readonly probe: () => boolean;
  private held = false;
  /** Units of work begun and not finished, waiting for the mutex included (nested ones join their outer unit). */
  private units = 0;
  /** Units of work wait (the checkpointer's last copy before the log starts over); other calls go on. */
  private holding = false;
  /** Marks the async context of the unit of work holding the mutex: a call from inside it must not wait for it. */
  private readonly unit = new AsyncLocalStorage<SqliteStore>();
  private readonly waiting: (() => void)[] = [];
  /** Appends to the event log, announced after their commit. */
  private readonly advances: LogAdvances;
  /** Checkpoints on a worker thread, off the event loop (group commit only). */
  private checkpointer: Checkpointer | undefined;

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
    this.probe = readinessProbe(db);
  }

  /** Every unit of work is serial here (one writer at a time), whatever its options ask. */
  async transaction<T>(fn: (tx: Repositories) => Promise<T>, _o?: UnitOptions): Promise<T> {
    // A unit of work inside another joins it (better-sqlite3 has no nested BEGIN; the outer one commits all).
    if (this.unit.getStore() === this) return fn(this.inside);
    this.units++;
    try {
      return await this.advances.around(() => this.serial(fn));
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

  private async serial<T>(fn: (tx: Repositories) => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      // IMMEDIATE takes the write lock first, so writers in other processes queue instead of failing mid-transaction.
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = await this.unit.run(this, () => fn(this.inside));
        this.db.exec("COMMIT");
        return result;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw e;
      }
    } catch (e) {
      throw storageError(e);
    } finally {
      this.release();
    }
  }

  /** Moves WAL checkpoints to a worker thread (see Checkpointer); the store stops it at close. */
  checkpointInBackground(path: string, o?: CheckpointerOptions): Checkpointer {
    this.checkpointer = new Checkpointer(this.db, path, (fn) => this.holdingUnits(fn), o);
    return this.checkpointer;
  }

  durable(): Promise<void> {
    return this.walSync?.durable()?.catch((e: unknown) => Promise.reject(storageError(e))) ?? done;
  }

  async ready(): Promise<boolean> {
    try {
      return this.probe();
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
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

  bulkLoader(): SqliteBulkLoader {
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
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
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
    demoSetup: asyncRepository(sync.demoSetup, run),
    members: asyncRepository(sync.members, run),
    invitations: asyncRepository(sync.invitations, run),
    profiles: asyncRepository(sync.profiles, run),
    pictures: asyncRepository(sync.pictures, run),
    notes: asyncRepository(sync.notes, run),
    savedReplies: asyncRepository(sync.savedReplies, run),
    events: asyncRepository(sync.events, run),
    webhooks: asyncRepository(sync.webhooks, run),
    idempotency: asyncRepository(sync.idempotency, run),
    audit: asyncRepository(sync.audit, run),
    privacy: asyncRepository(sync.privacy, run),
    ratings: asyncRepository(sync.ratings, run),
    reports: asyncRepository(sync.reports, run),
  };
}
