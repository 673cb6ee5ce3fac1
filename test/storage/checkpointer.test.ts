import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../../src/storage/sqlite/index.js";
import { waitFor } from "../helpers/time-scale.js";

// Checkpoints on a worker thread (src/storage/sqlite/checkpointer.ts): the connection never checkpoints inside a
// commit, the log is copied into the database beside the writes, and under writes that never pause the log still
// starts over instead of growing.
let dir: string;
let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
  store = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function open(o: Parameters<typeof openSqliteStore>[1] = {}): { store: SqliteStore; path: string } {
  dir = mkdtempSync(join(tmpdir(), "aiagent-ckpt-"));
  const path = join(dir, "t.db");
  store = openSqliteStore(path, { synchronous: "FULL", ...o });
  return { store, path };
}

const account = (i: number) => ({
  accountId: `00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`,
  email: `${i}-${Math.random()}@x.example`,
  passwordHash: null,
  active: true,
  createdAt: i,
});

async function writeUnits(s: SqliteStore, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) {
    await s.transaction(async (tx) => {
      await tx.accounts.insert(account(i));
    });
    await s.durable();
  }
}

/** Frames in the log, and how many of them are in the database file, as another connection sees them. */
async function logState(path: string): Promise<{ log: number; checkpointed: number }> {
  const other = new Database(path);
  try {
    // A NOOP-like look: PASSIVE copies what it can, which is what the worker would do anyway. While the worker's own
    // checkpoint runs, this one cannot, and reports busy with -1 frames (which would pass any upper bound): look
    // again once the worker's is done.
    let r: { busy: number; log: number; checkpointed: number } | undefined;
    await waitFor("a checkpoint beside the worker's", () => {
      [r] = other.pragma("wal_checkpoint(PASSIVE)") as NonNullable<typeof r>[];
      return r!.busy === 0;
    });
    return r!;
  } finally {
    other.close();
  }
}

describe("the background checkpointer", () => {
  it("turns the connection's automatic checkpoint off, and copies the log beside the writes", async () => {
    const { store: s, path } = open({ checkpointer: { pollMs: 10, changedRows: 10, idleMs: 20 } });
    expect(s.db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    await writeUnits(s, 0, 50);
    // Within a few polls the worker has copied every frame.
    await expect
      .poll(async () => {
        const r = await logState(path);
        return r.log > 0 && r.checkpointed === r.log;
      })
      .toBe(true);
    expect(await s.accounts.byId(account(49).accountId)).toMatchObject({ createdAt: 49 });
  });

  it("under writes that never pause, holds units of work once the log is long, and the log starts over", async () => {
    const { store: s, path } = open({ checkpointer: false });
    const c = s.checkpointInBackground(path, { pollMs: 5, changedRows: 1, idleMs: 5, restartFrames: 64 });
    // The worker starts at the first checkpoint, and a loaded machine takes longer to start a thread (and load
    // SQLite into it) than to write the units below: the promise is about writes beside a running checkpointer.
    // This first checkpoint also copies the migrations' few hundred frames, so the next write starts the log over.
    const first = await c.checkpoint();
    expect(first.checkpointed).toBe(first.log);
    const wal = `${path}-wal`;
    const before = statSync(wal).size;
    // Several writers at once, never idle, for a number of units (not a time: a busy machine writes fewer per
    // second): without the hold the log would only grow.
    const UNITS = 400;
    let n = 0;
    const writer = async () => {
      while (n < UNITS) {
        const i = n++;
        await s.transaction(async (tx) => {
          await tx.accounts.insert(account(i));
        });
        await s.durable();
      }
    };
    await Promise.all(Array.from({ length: 8 }, writer));
    expect(n).toBeGreaterThanOrEqual(UNITS);
    // Each unit appends at least two frames (the table and its indexes): a log holding fewer frames than there were
    // units has started over, and its file grew by less than a page per unit.
    expect((await logState(path)).log).toBeLessThan(n);
    const pageSize = s.db.pragma("page_size", { simple: true }) as number;
    expect(statSync(wal).size - before).toBeLessThan(pageSize * n);
    const count = s.db.prepare("SELECT count(*) AS c FROM accounts").get() as { c: number };
    expect(count.c).toBe(n);
  });

  it("a worker that fails gives the checkpoints back to the connection", async () => {
    const { store: s } = open({ checkpointer: false });
    const c = s.checkpointInBackground(join(dir, "missing.db"));
    expect(s.db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    // The worker (started by the first checkpoint) cannot open a file that is not there: it exits, the checkpoint
    // fails, and the connection checkpoints by itself again.
    await expect(c.checkpoint()).rejects.toThrow(/stopped/);
    await expect.poll(() => s.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("stops for the bulk loader, which needs the file to itself, and gives the checkpoints back", async () => {
    const { store: s } = open({ checkpointer: { pollMs: 10, changedRows: 1, idleMs: 10 } });
    await writeUnits(s, 0, 20);
    const loader = await s.bulkLoader();
    expect(s.db.pragma("journal_mode", { simple: true })).toBe("delete");
    loader.finish();
  });

  it("is not started for synchronous=OFF, nor when asked not to", () => {
    const off = open({ synchronous: "OFF" });
    expect(off.store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    void off.store.close();
    rmSync(dir, { recursive: true, force: true });
    const none = open({ checkpointer: false });
    expect(none.store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });
});
