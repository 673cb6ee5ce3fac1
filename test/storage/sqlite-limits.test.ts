import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Db, openDatabase, unboundLimit } from "../../src/storage/sqlite/database.js";

// SQLite compiles a statement again whenever a bare LIMIT parameter is bound anew (its value shapes the plan): the
// handle writes such parameters as expressions, which are evaluated when the statement runs (database.ts,
// unboundLimit). What a LIMIT or OFFSET selects must not change.

let dir: string;
let db: Db;
afterEach(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

const open = () => {
  dir = mkdtempSync(join(tmpdir(), "aiagent-limits-"));
  db = openDatabase(join(dir, "t.db"), { synchronous: "OFF" });
  db.exec("CREATE TABLE n (v INTEGER NOT NULL)");
  const add = db.prepare("INSERT INTO n (v) VALUES (?)");
  for (let v = 1; v <= 6; v++) add.run(v);
  return db;
};

describe("LIMIT and OFFSET parameters", () => {
  it("reach SQLite as expressions of the parameter, positional or named; literals and other parameters as written", () => {
    const d = open();
    expect(d.prepare("SELECT v FROM n WHERE v > ? ORDER BY v LIMIT ? OFFSET ?").source).toBe(
      "SELECT v FROM n WHERE v > ? ORDER BY v LIMIT (? + 0) OFFSET (? + 0)",
    );
    expect(d.prepare("SELECT v FROM n ORDER BY v\n  LIMIT @limit OFFSET @offset").source).toBe(
      "SELECT v FROM n ORDER BY v\n  LIMIT (@limit + 0) OFFSET (@offset + 0)",
    );
    expect(d.prepare("SELECT v FROM n ORDER BY v LIMIT 3").source).toBe("SELECT v FROM n ORDER BY v LIMIT 3");
    expect(unboundLimit("DELETE FROM n WHERE rowid IN (SELECT rowid FROM n WHERE v < ?2 LIMIT ?1)")).toBe(
      "DELETE FROM n WHERE rowid IN (SELECT rowid FROM n WHERE v < ?2 LIMIT (?1 + 0))",
    );
  });

  it("select what the literals select", () => {
    const d = open();
    const page = d.prepare("SELECT v FROM n WHERE v > ? ORDER BY v LIMIT ? OFFSET ?").pluck();
    expect(page.all(1, 2, 1)).toEqual([3, 4]);
    expect(page.all(0, 10, 4)).toEqual([5, 6]);
    expect(page.all(0, -1, 0)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(page.all(0, 0, 0)).toEqual([]);
    const named = d.prepare("SELECT v FROM n ORDER BY v DESC LIMIT @limit OFFSET @offset").pluck();
    expect(named.all({ limit: 2, offset: 0 })).toEqual([6, 5]);
    expect(named.all({ limit: 3, offset: 2 })).toEqual([4, 3, 2]);
  });
});
