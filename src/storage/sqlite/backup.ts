import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreOpenError } from "../../domain/store.js";

/** A backup or restore that cannot be made; the command stops with this message and changes nothing. */
export class BackupError extends StoreOpenError {
  override readonly name = "BackupError";
}

/** Every page in one step (better-sqlite3's pages-per-step; SQLite's maximum). */
const ALL_PAGES = 0x7fffffff;

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies `source` into a new file at `dest` and makes it one self-contained, checked, durable file: written beside
 * `dest` under another name, then renamed, so `dest` never holds half a copy.
 */
async function copyDatabase(source: Database.Database, dest: string): Promise<number> {
  const partial = `${dest}.partial-${process.pid}`;
  rmSync(partial, { force: true });
  try {
    // Created here, readable by its owner only (0600): SQLite would create it 0644, and a backup is the whole database.
    closeSync(openSync(partial, "wx", 0o600));
    // All pages in one step: SQLite copies them inside one read transaction, so the copy is the database as of one
    // commit while writers go on (WAL). In small steps, every write by another connection would restart the copy.
    const { totalPages } = await source.backup(partial, { progress: () => ALL_PAGES });
    const copy = new Database(partial);
    try {
      // One file, no -wal beside it, and every page readable.
      copy.pragma("journal_mode = DELETE");
      const check = copy.pragma("quick_check", { simple: true });
      if (check !== "ok") throw new BackupError(`the copy failed its check (${String(check)})`);
    } finally {
      copy.close();
    }
    fsyncPath(partial);
    renameSync(partial, dest);
    fsyncPath(dirname(dest));
    return totalPages;
  } finally {
    rmSync(partial, { force: true });
  }
}

/** Opens an existing database file without creating, migrating or changing it. */
function openExisting(path: string, what: string): Database.Database {
  if (!existsSync(path)) throw new BackupError(`${what} ${path} does not exist`);
  try {
    const db = new Database(path, { fileMustExist: true });
    db.pragma("busy_timeout = 5000");
    return db;
  } catch (e) {
    throw new BackupError(`cannot open ${what} ${path}: ${(e as Error).message}`);
  }
}

/** A consistent copy of the live database at `path` (the server may go on writing) into the new file `dest`. */
export async function backupSqlite(path: string, dest: string): Promise<{ pages: number }> {
  if (existsSync(dest)) throw new BackupError(`${dest} already exists; a backup never overwrites a file`);
  if (!existsSync(dirname(dest))) throw new BackupError(`directory ${dirname(dest)} does not exist`);
  const db = openExisting(path, "database");
  try {
    return { pages: await copyDatabase(db, dest) };
  } finally {
    db.close();
  }
}

/**
 * Whether a process holds the database open (a running server keeps its connection for as long as it runs): an
 * exclusive lock in exclusive locking mode is refused while any other connection has the file open in WAL mode.
 */
function inUse(path: string): boolean {
  const db = new Database(path, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    return false;
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith("SQLITE_BUSY")) return true;
    throw new BackupError(`cannot open database ${path}: ${(e as Error).message}`);
  } finally {
    db.close();
  }
}

/**
 * Puts the backup `from` in place as the database at `path`. Refused while a server holds `path`; a database already
 * there is kept beside it (returned) rather than deleted.
 */
export async function restoreSqlite(from: string, path: string): Promise<{ pages: number; kept: string | undefined }> {
  const source = openExisting(from, "backup");
  try {
    let version: number;
    try {
      version = source.pragma("user_version", { simple: true }) as number;
      const accounts = source.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'accounts'").get();
      if (version < 1 || !accounts) throw new BackupError(`${from} is not an aiagent database`);
    } catch (e) {
      if (e instanceof BackupError) throw e;
      throw new BackupError(`${from} is not an aiagent database (${(e as Error).message})`);
    }
    // A new place for the database gets its folder, as the server makes its own (0700: it holds the database).
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const present = existsSync(path);
    if (present && inUse(path))
      throw new BackupError(`database ${path} is in use by a running server; stop it before restoring over it`);
    const pages = await copyDatabase(source, `${path}.restoring`);
    let kept: string | undefined;
    if (present) {
      kept = `${path}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
      renameSync(path, kept);
    }
    // Log files of the database replaced would be replayed into the restored one.
    for (const suffix of ["-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    renameSync(`${path}.restoring`, path);
    fsyncPath(dirname(path));
    return { pages, kept };
  } finally {
    source.close();
  }
}
