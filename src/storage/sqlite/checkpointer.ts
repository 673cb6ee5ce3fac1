import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type { Db } from "./database.js";

/** What one checkpoint reported: frames in the log, and how many of them are now in the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

/** When the background checkpointer copies the log, and when it lets the log start over. */
export interface CheckpointerOptions {
  /** How often it looks whether there is anything to copy, ms (default 50). */
  pollMs?: number;
  /** Rows changed since the last checkpoint that start the next one at once (default 256). */
  changedRows?: number;
  /** A checkpoint runs at the latest this long after a write, ms (default 2,000). */
  idleMs?: number;
  /**
   * Log frames past which units of work wait for one last small checkpoint, so that the next write starts the log
   * over from its beginning (default 16,384: 64 MB of 4 kB pages). Under writes that never pause, a checkpoint run
   * beside them never catches up with the end of the log, and the log would only grow.
   */
  restartFrames?: number;
}

// The worker: its own connection to the file, one PASSIVE checkpoint per message. With synchronous=FULL on this
// connection SQLite fsyncs the log before copying it and the database file after, as the automatic checkpoint does.
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma("synchronous = FULL");
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
parentPort.on("message", (m) => {
  if (m === "close") {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const r = checkpoint.get();
    parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});
`;

const require = createRequire(import.meta.url);

/**
 * WAL checkpoints off the event loop. With group commit the connection commits with synchronous=NORMAL, and
 * SQLite's automatic checkpoint runs inside the commit that takes the log past 1,000 pages, on the event loop: it
 * fsyncs the log, copies the pages into the database file and fsyncs that (and the first commit after the log
 * restarts fsyncs its header). Under a steady write load that was two blocking fsyncs every hundred or so commits.
 * Here the connection's automatic checkpoint is off and a worker thread, on its own connection, runs the same
 * checkpoint (PASSIVE: it never blocks readers or the writer) beside the event loop. SQLite's own locking orders
 * it with the writes: frames are copied only once they are in the log, the log is synced before the copy and
 * the database after it, and the log starts over only once everything in it is in the database file and synced.
 * Durability is unchanged: an answer still waits for WalSync's fsync of the log.
 *
 * If the worker fails, the connection's automatic checkpoint is turned back on.
 */
export class Checkpointer {
  /** Started at the first checkpoint: a process that writes little (a command) never starts one. */
  private worker: Worker | undefined;
  private readonly totalChanges;
  private readonly pollMs: number;
  private readonly changedRows: number;
  private readonly idleMs: number;
  private readonly restartFrames: number;
  private readonly timer: NodeJS.Timeout;
  private readonly path: string;
  /** total_changes() when the last checkpoint started. */
  private checkpointedAt = 0;
  private lastRunAt = Date.now();
  /** The log was not all copied at the last look: look again even without new writes. */
  private behind = false;
  private running = false;
  private pending: { resolve: (r: CheckpointResult) => void; reject: (e: Error) => void }[] = [];
  private stopped = false;
  private closing: Promise<void> | undefined;

  /**
   * `holdWrites(fn)` runs fn while no unit of work is open and none starts (the store's writes wait; reads go on):
   * the last checkpoint before the log starts over.
   */
  constructor(
    private readonly db: Db,
    path: string,
    private readonly holdWrites: (fn: () => Promise<void>) => Promise<void>,
    o: CheckpointerOptions = {},
  ) {
    this.pollMs = o.pollMs ?? 50;
    this.changedRows = o.changedRows ?? 256;
    this.idleMs = o.idleMs ?? 2000;
    this.restartFrames = o.restartFrames ?? 16_384;
    this.totalChanges = db.prepare<[], number>("SELECT total_changes()").pluck();
    this.checkpointedAt = this.totalChanges.get()!;
    this.path = path;
    db.pragma("wal_autocheckpoint = 0");
    this.timer = setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
  }

  /** Runs one checkpoint now (tests; the timer runs them otherwise). */
  checkpoint(): Promise<CheckpointResult> {
    if (this.stopped) return Promise.reject(new Error("the checkpointer has stopped"));
    const worker = this.started();
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      worker.postMessage("run");
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { driver: require.resolve("better-sqlite3"), path: this.path },
    });
    worker.unref();
    worker.on("message", (m: CheckpointResult | { error: string }) => {
      const p = this.pending.shift();
      if ("error" in m) p?.reject(new Error(m.error));
      else p?.resolve(m);
    });
    worker.on("error", () => this.fail());
    worker.on("exit", () => this.fail());
    this.worker = worker;
    return worker;
  }

  /**
   * Stops the worker and closes its connection; the store's own connection checkpoints by itself again (and at
   * close, as it always does).
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    clearInterval(this.timer);
    const worker = this.worker;
    const was = this.stopped;
    this.stopped = true;
    if (!was) this.automatic();
    if (was || !worker) return (this.closing = Promise.resolve());
    this.closing = new Promise<void>((resolve) => {
      // Held until the worker is gone: an unreferenced worker would let the process end before close resolves.
      worker.ref();
      const kill = setTimeout(() => void worker.terminate(), 5000);
      worker.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      worker.postMessage("close");
    });
    return this.closing;
  }

  private async tick(): Promise<void> {
    if (this.running || this.stopped) return;
    const changes = this.totalChanges.get()!;
    const now = Date.now();
    const written = changes - this.checkpointedAt;
    if (!this.behind && (written === 0 || (written < this.changedRows && now - this.lastRunAt < this.idleMs))) return;
    this.running = true;
    try {
      this.checkpointedAt = changes;
      this.lastRunAt = now;
      let r = await this.checkpoint();
      if (r.log >= this.restartFrames) {
        // The log starts over at the first write that begins once all of it is in the database file; a unit that
        // began while the copy ran keeps appending to it. With units held, copy what they added (often nothing):
        // the next unit starts the log over.
        await this.holdWrites(async () => {
          r = await this.checkpoint();
        });
      }
      this.behind = r.checkpointed < r.log;
    } catch {
      // A checkpoint that could not run (the file busy in another process) is tried again at the next tick.
      this.behind = true;
    } finally {
      this.running = false;
    }
  }

  /** The worker is gone: every waiting checkpoint fails, and the connection checkpoints by itself again. */
  private fail(): void {
    const was = this.stopped;
    this.stopped = true;
    clearInterval(this.timer);
    for (const p of this.pending.splice(0)) p.reject(new Error("the checkpointer has stopped"));
    if (!was) this.automatic();
  }

  /** SQLite's automatic checkpoint, at its default, on the store's own connection. */
  private automatic(): void {
    if (!this.db.open) return;
    try {
      this.db.pragma("wal_autocheckpoint = 1000");
    } catch {
      // The connection is closing.
    }
  }
}
