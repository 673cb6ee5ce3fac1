import type { Db } from "../database.js";

/**
 * Where the file stands: changed by another connection (`data_version`, which moves with every commit made by any
 * other connection, this process's checkpointer and other processes alike) or by this one (`total_changes()`, every
 * row this connection has inserted, updated or deleted, triggers included, committed or not). Undefined while this
 * connection is inside a transaction: what it reads then may be rolled back, so nothing read then is kept.
 */
export type FileState = () => string | undefined;

const states = new WeakMap<Db, FileState>();

/**
 * The file's state as one connection sees it; shared by that connection's memos. `total_changes()` is read every time
 * (no read transaction: a fraction of a microsecond). `data_version` needs one (3–5 µs, as much as the reads it
 * spares), so it is read once per task of the event loop (one I/O callback, timer or immediate, with every microtask
 * and `nextTick` callback it leads to) and read again in the next: the reads a call makes while it runs on, from its
 * ID token's account, keys and revocations to its list's version, share one. JavaScript takes in no new input within
 * a task (every socket read, worker message and timer is a task of its own), so everything served in one arrived
 * before the task began and before its first reading: a commit by another connection that a call must see (one made
 * before the call arrived) is in it; a commit made during the task is seen from the next.
 */
export function fileState(db: Db): FileState {
  let state = states.get(db);
  if (!state) {
    const changes = db.prepare<[], number>("SELECT total_changes()").pluck();
    const version = db.prepare<[], number>("PRAGMA data_version").pluck();
    let seen: number | undefined;
    // The last state made, and what it was made of: the same state is the same string (no new one per read, and
    // the memos' comparison of two states is one of references).
    let made = "";
    let madeOf = -1;
    let madeAt: number | undefined;
    const forget = () => {
      seen = undefined;
    };
    // Queued behind the microtasks already queued, then behind all of them: Node runs `nextTick` callbacks queued by
    // a microtask only once the microtask queue is empty, and both queues are emptied before the next task.
    const forgetAfterTask = () => process.nextTick(forget);
    state = () => {
      if (db.inTransaction) return undefined;
      if (seen === undefined) {
        seen = version.get()!;
        queueMicrotask(forgetAfterTask);
      }
      const n = changes.get()!;
      if (n !== madeOf || seen !== madeAt) {
        made = `${n}.${seen}`;
        madeOf = n;
        madeAt = seen;
      }
      return made;
    };
    states.set(db, state);
  }
  return state;
}

/**
 * Reads kept while the file is unchanged: a kept answer is given only when no row has changed since it was read,
 * by this connection or any other, so it is the answer the statement would give now — exact, unlike ShortMemo, and
 * with no writer to tell. For reads made on every call whose rows seldom change (an ID token's account, its keys,
 * its revocations): one cheap statement instead of the read. Every entry goes at the first change of anything;
 * bounded (all dropped at `max` entries). The values are shared between callers: never modified.
 */
export class UnchangedMemo<V> {
  private readonly entries = new Map<string, V>();
  private readAt: string | undefined;

  constructor(
    private readonly state: FileState,
    private readonly max = 10_000,
  ) {}

  get(key: string, read: () => V): V {
    const now = this.state();
    if (now === undefined) return read();
    if (now !== this.readAt) {
      this.entries.clear();
      this.readAt = now;
    } else if (this.entries.has(key)) return this.entries.get(key) as V;
    // Read after the state: a change between the two only makes the next call read again.
    const value = read();
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, value);
    return value;
  }
}
