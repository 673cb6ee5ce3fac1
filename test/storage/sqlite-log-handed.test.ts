import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../../src/storage/sqlite/index.js";
import { waitFor } from "../helpers/time-scale.js";
import { accountReader } from "./account-reader.js";
import { account, event } from "./contract/fixtures.js";

// On SQLite an event takes its place in its account's log at the append, in its writer's unit of work: the store's
// announcement of a committed unit carries its entries, so this process's readers (every watch stream's) hand them on
// without reading them back, exactly as a read would have answered them.
let dir: string;
let store: SqliteStore;
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("SQLite: a unit's events reach this process's readers in its announcement", () => {
  it("without a read of the log, each entry as the log stores it, once and in place order, units side by side included", async () => {
    dir = mkdtempSync(join(tmpdir(), "aiagent-handed-"));
    store = openSqliteStore(join(dir, "t.db"), { synchronous: "OFF" });
    const a = await account(store);
    const { logs, got, run, done } = await accountReader(store, a.accountId);
    await waitFor("the reader has read the empty log", () => logs.counts.shared > 0);
    const reads = logs.counts.shared;
    // One unit at a time, one or two events each; then units side by side (sharing one transaction).
    for (let i = 0; i < 4; i++)
      await store.transaction((tx) =>
        tx.events.add(
          Array.from({ length: 1 + (i % 2) }, () => ({
            // A value JSON leaves out (undefined) and one it changes (a date): the entry is handed as stored.
            event: {
              ...event(a.accountId, `c${i % 2}`),
              data: { conversationId: `c${i % 2}`, gone: undefined, at: new Date(5) },
            },
            deliveries: [],
          })),
        ),
      );
    await Promise.all(
      Array.from({ length: 4 }, (_, w) =>
        store.transaction((tx) => tx.events.add([{ event: event(a.accountId, `c${w}`), deliveries: [] }])),
      ),
    );
    const all = await store.events.list(a.accountId, 0, 100, []);
    expect(all).toHaveLength(10);
    await waitFor("the reader has every entry", () => got.length === all.length);
    expect(got).toStrictEqual(all);
    expect(logs.counts.handed).toBe(8);
    expect(logs.counts.shared).toBe(reads);
    done();
    await run;
  });
});
