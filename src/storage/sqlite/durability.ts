import { closeSync, fstatSync, fsync, fsyncSync, openSync, statSync } from "node:fs";
import type { Db } from "./database.js";

/** fs.fsync's shape: what WalSync calls to make the log durable (a test may hold or fail it). */
export type Fsync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/**
 * Group commit for a WAL database opened with synchronous=NORMAL: commits go to the log without waiting for the
 * disk, and `durable()` resolves once everything committed so far has been fsynced. One fsync, run on libuv's
 * thread pool, covers every commit made before it started, so concurrent requests share it and the event loop
 * never blocks on the disk. A caller that answers only after `durable()` gives the guarantee of
 * synchronous=FULL (a commit that was acknowledged survives a power cut) at a fraction of its cost.
 */
export class WalSync {
  private readonly walPath: string;
  private readonly totalChanges;
  private fd: number | undefined;
  private ino = 0;
  /** total_changes() covered by the last completed fsync. */
  private synced = -1;
  private running = false;
  private waiters: { upTo: number; promise: Promise<void>; resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(
    db: Db,
    dbPath: string,
    private readonly fsyncLog: Fsync = fsync,
  ) {
    this.walPath = `${dbPath}-wal`;
    // Rows changed by this connection since it opened, triggers included: a cheap "has anything been written".
    this.totalChanges = db.prepare<[], number>("SELECT total_changes()").pluck();
  }

  /**
   * Resolves when every commit made so far is on disk; undefined when there is nothing to wait for. Callers that ask
   * with no commit in between (the streams an event is fanned out to) share one promise: they wait for the same fsync.
   */
  durable(): Promise<void> | undefined {
    const upTo = this.totalChanges.get()!;
    if (upTo <= this.synced) return undefined;
    const last = this.waiters.at(-1);
    if (last?.upTo === upTo) return last.promise;
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.waiters.push({ upTo, promise, resolve, reject });
    this.start();
    return promise;
  }

  /** Makes everything committed so far durable before returning (at shutdown and for one-shot commands). */
  flushSync(): void {
    const upTo = this.totalChanges.get()!;
    if (upTo <= this.synced) return;
    const fd = this.walFd();
    if (fd !== undefined) fsyncSync(fd);
    this.synced = upTo;
  }

  /** Releases the log's file descriptor. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private start(): void {
    if (this.running || this.waiters.length === 0) return;
    const upTo = this.totalChanges.get()!;
    let fd: number | undefined;
    try {
      fd = this.walFd();
    } catch (e) {
      this.settle(upTo, e as Error);
      return;
    }
    // No log file: nothing was ever written through it (or it was checkpointed away and removed), so nothing waits.
    if (fd === undefined) {
      this.settle(upTo);
      return;
    }
    this.running = true;
    this.fsyncLog(fd, (err) => {
      this.running = false;
      this.settle(upTo, err ?? undefined);
      this.start();
    });
  }

  private settle(upTo: number, err?: Error): void {
    if (!err) this.synced = Math.max(this.synced, upTo);
    const ready = this.waiters.filter((w) => w.upTo <= upTo);
    this.waiters = this.waiters.filter((w) => w.upTo > upTo);
    for (const w of ready) {
      if (err) w.reject(err);
      else w.resolve();
    }
  }

  /** A descriptor of the current log file, reopened if SQLite replaced the file. */
  private walFd(): number | undefined {
    let ino: number;
    try {
      ino = statSync(this.walPath).ino;
    } catch {
      return undefined;
    }
    if (this.fd !== undefined && ino !== this.ino) this.close();
    if (this.fd === undefined) {
      this.fd = openSync(this.walPath, "r");
      this.ino = fstatSync(this.fd).ino;
    }
    return this.fd;
  }
}
