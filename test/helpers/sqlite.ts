import type { App } from "../../src/app.js";
import { type Db, SqliteStore } from "../../src/storage/sqlite/index.js";

/** The SQLite handle under an app (for tests that inspect or damage the file itself). */
export function sqliteDb(app: App): Db {
  if (!(app.store instanceof SqliteStore)) throw new Error("this test needs the SQLite back end");
  return app.store.db;
}
