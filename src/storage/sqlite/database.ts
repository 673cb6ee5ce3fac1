import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "../../domain/store.js";
import { migrations } from "./migrations.js";

/** The handle every repository shares. */
export type Db = Database.Database;

/** Options for opening the database. */
export interface OpenOptions {
  synchronous?: "OFF" | "NORMAL" | "FULL";
  /**
   * With synchronous FULL: commit with NORMAL and leave the fsync to a WalSync that the caller waits on before it
   * answers (group commit: one fsync for many requests, off the event loop).
   */
  groupCommit?: boolean;
  busyTimeoutMs?: number;
  /** Refuse to create a database that does not exist yet (used by read-only tools). */
  mustExist?: boolean;
}

/** A database that cannot be opened or is not ours; start-up fails loudly with it. */
export class DatabaseOpenError extends StoreOpenError {
  override readonly name = "DatabaseOpenError";
}

/** Opens (creating if needed) the SQLite file in WAL mode and brings its schema up to date. */
export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (path !== ":memory:") {
    if (opts.mustExist && !existsSync(path)) throw new DatabaseOpenError(`database ${path} does not exist`);
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      ownerOnly(path);
    } catch (e) {
      // A directory, a folder not ours, a read-only disk: the same loud start-up error as SQLite's own refusals.
      throw new DatabaseOpenError(`cannot open database ${path}: ${(e as Error).message}`);
    }
  }
  let db: Db | undefined;
  try {
    db = new Database(path);
    unboundLimits(db);
    // First: switching to WAL takes a lock, and another process may hold one for a moment.
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
    db.pragma("journal_mode = WAL");
    const synchronous = opts.synchronous ?? "FULL";
    db.pragma(`synchronous = ${synchronous === "FULL" && opts.groupCommit ? "NORMAL" : synchronous}`);
    db.pragma("foreign_keys = ON");
    db.pragma("temp_store = MEMORY");
    migrate(db);
  } catch (e) {
    db?.close();
    throw new DatabaseOpenError(`cannot open database ${path}: ${(e as Error).message}`);
  }
  return db;
}

/**
 * A LIMIT or OFFSET given as a bound parameter, written as an expression of it: `LIMIT ?` becomes `LIMIT (? + 0)`.
 * With a bare LIMIT parameter, each run of a statement costs about what compiling it again would (SQLite 3.53 lets
 * the bound value of a LIMIT shape the plan, so a new binding expires the statement): 10–40 µs a run for this
 * service's reads (the history a reply reads, the knowledge sources, a page of messages), more than many of them
 * cost to run. An expression of the parameter is evaluated when the statement runs, as the literal's value would
 * be, and the compiled statement is kept (docs/performance.md, "Session 23: the send"). Applied to every statement
 * prepared on the handle; a parameter elsewhere is left as it is.
 */
export function unboundLimit(sql: string): string {
  return sql.replace(/\b(LIMIT|OFFSET)(\s+)(\?\d*|[@:$][A-Za-z_]\w*)(?!\w)/gi, "$1$2($3 + 0)");
}

/** Makes `db.prepare` write each statement's LIMIT and OFFSET parameters as expressions (unboundLimit). */
function unboundLimits(db: Db): void {
  const prepare = db.prepare;
  db.prepare = function (this: Db, sql: string) {
    return prepare.call(this, unboundLimit(sql));
  } as Db["prepare"];
}

/**
 * Makes the database file readable and writable by its owner only (0600), creating it empty if it does not exist yet:
 * SQLite creates its -wal and -shm files with the database file's permissions, so they are 0600 too. A file of an
 * older version made 0644 is narrowed, with its -wal and -shm; a file owned by someone else is left as it is.
 */
function ownerOnly(path: string): void {
  closeSync(openSync(path, "a", 0o600));
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((statSync(f).mode & 0o077) !== 0) chmodSync(f, 0o600);
    } catch {
      // absent (no -wal yet), or not ours to change
    }
  }
}

/** Applies every migration newer than the file's user_version, each in one transaction. */
export function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  if (current > latest)
    throw new DatabaseOpenError(`database schema version ${current} is newer than this build knows (${latest})`);
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      // Another process opening the same file at once may have applied it while this one waited for the lock.
      if ((db.pragma("user_version", { simple: true }) as number) >= m.version) return;
      db.exec(m.sql);
      m.after?.(db);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}
