import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { foldForSearch } from "../../src/domain/conversation/search-fold.js";
import { openDatabase, sqliteRepositories } from "../../src/storage/sqlite/index.js";
import { migrations } from "../../src/storage/sqlite/migrations.js";

const dir = mkdtempSync(join(tmpdir(), "aiagent-backfill-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a database written before the folded search text gets it at start: its old contacts are found by any case and accent", () => {
  const path = join(dir, "old.db");
  // The schema as it was before the stored search text (migration 5), with contacts written then.
  const old = new Database(path);
  for (const m of migrations.filter((m) => m.version < 5)) {
    old.exec(m.sql);
    old.pragma(`user_version = ${m.version}`);
  }
  old.prepare("INSERT INTO accounts (account_id, email, created_at) VALUES ('acc', 'o@example.com', 1)").run();
  const add = old.prepare(
    "INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, created_at, latest_message_at) VALUES (?, 'acc', ?, ?, ?, 1, ?)",
  );
  add.run("c1", "u1", "ÉMILE Zola", "emile@example.com", 10);
  add.run("c2", "u2", "Ösel Ärnberg", "", 20);
  for (let i = 0; i < 50; i++) add.run(`x${i}`, `other-${i}`, `Plain ${i}`, "", 5);
  old.close();

  const db = openDatabase(path, { synchronous: "OFF" });
  const repos = sqliteRepositories(db);
  const names = (search: string) =>
    repos.contacts
      .list({
        accountId: "acc",
        search: foldForSearch(search),
        filter: "all",
        assignee: null,
        limit: 100,
        offset: 0,
        liveSince: 0,
      })
      .contacts.map((c) => c.contactName);
  try {
    for (const term of ["émile", "EMILE", "zola"]) expect(names(term), term).toEqual(["ÉMILE Zola"]);
    for (const term of ["Ösel", "osel", "ärn"]) expect(names(term), term).toEqual(["Ösel Ärnberg"]);
    // The trigram index was rebuilt from the backfilled text.
    expect(db.prepare("SELECT count(*) AS n FROM contact_search WHERE contact_search MATCH '\"osel\"'").get()).toEqual({
      n: 1,
    });
    expect(db.prepare("SELECT count(*) AS n FROM contacts WHERE search_text = ''").get()).toEqual({ n: 0 });
  } finally {
    db.close();
  }
});
