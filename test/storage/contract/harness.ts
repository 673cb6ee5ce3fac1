import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Store } from "../../../src/domain/store.js";
import { openSqliteStore } from "../../../src/storage/sqlite/index.js";

/** One back end under the contract: a fresh, empty store per call, and a way to make it fail. */
export interface Backend {
  name: string;
  open(): Promise<Harness>;
}

export interface Harness {
  store: Store;
  /** Another client holds the back end's write lock until the returned function is called. */
  holdWriteLock(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** SQLite: a real file in a temporary directory, group commit on, a short busy timeout so a held lock shows fast. */
export const sqliteBackend: Backend = {
  name: "sqlite",
  async open() {
    const dir = mkdtempSync(join(tmpdir(), "aiagent-contract-"));
    const path = join(dir, "contract.db");
    const store = openSqliteStore(path, { synchronous: "FULL", busyTimeoutMs: 50 });
    return {
      store,
      async holdWriteLock() {
        const other = new Database(path);
        other.exec("BEGIN IMMEDIATE");
        return async () => {
          other.exec("ROLLBACK");
          other.close();
        };
      },
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** Every back end the contract runs on. */
export const backends: Backend[] = [sqliteBackend];
