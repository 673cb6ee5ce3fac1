import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Db, openDatabase, WalSync } from "../../src/storage/sqlite/index.js";

let dir: string;
let db: Db;
let sync: WalSync;

function open(): void {
  dir = mkdtempSync(join(tmpdir(), "aiagent-wal-"));
  const path = join(dir, "t.db");
  db = openDatabase(path, { synchronous: "FULL", groupCommit: true });
  sync = new WalSync(db, path);
}

afterEach(() => {
  sync.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const write = () =>
  db
    .prepare("INSERT INTO accounts (account_id, email, created_at) VALUES (?, ?, 1)")
    .run(String(Math.random()), `${Math.random()}@x`);

describe("group commit", () => {
  it("commits without waiting for the disk (NORMAL), the wait being WalSync's", () => {
    open();
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    const plain = openDatabase(join(dir, "plain.db"), { synchronous: "FULL" });
    expect(plain.pragma("synchronous", { simple: true })).toBe(2);
    plain.close();
  });

  it("has nothing to wait for once every write is synced, and a wait after each new write", async () => {
    open();
    write();
    await sync.durable();
    expect(sync.durable()).toBeUndefined();
    write();
    const wait = sync.durable();
    expect(wait).toBeInstanceOf(Promise);
    await wait;
    expect(sync.durable()).toBeUndefined();
  });

  it("lets many waiters share the syncs, and each resolves only after its own write is covered", async () => {
    open();
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      write();
      waits.push(sync.durable()!);
    }
    await Promise.all(waits);
    expect(sync.durable()).toBeUndefined();
    // Writes made while a sync runs wait for the next one.
    write();
    const first = sync.durable()!;
    write();
    const second = sync.durable()!;
    await Promise.all([first, second]);
    expect(sync.durable()).toBeUndefined();
  });

  it("a read-only request does not wait", () => {
    open();
    write();
    sync.flushSync();
    db.prepare("SELECT count(*) FROM accounts").get();
    expect(sync.durable()).toBeUndefined();
  });
});
