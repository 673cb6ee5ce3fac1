import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setImmediate as nextTask } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { cachedDataset } from "../lib/dataset.js";

// What a contact list page asks of the SQLite store before its remembered page is served: its ID token's three reads
// side by side (the account, the lineage's revocations, the API keys), then the list version. Each page's reads run
// in a task of their own, as a request's do. Prints the statements per page, counted in better-sqlite3 (a load-free
// number: `PRAGMA data_version` and the list version each open a read transaction, `total_changes()` none), and the
// CPU per page. `--root` runs another checkout's store (`git worktree add --detach …`), to set two side by side.
// Needs the bench's 10k dataset (`npm run bench -- --quick` seeds it once).
//
//   node --import tsx bench/repro/list-page-reads.ts [--root DIR] [--pages 20000] [--rounds 3]
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values: opt } = parseArgs({
  options: {
    root: { type: "string", default: HERE },
    pages: { type: "string", default: "20000" },
    rounds: { type: "string", default: "3" },
  },
});
const root = resolve(opt.root!);
const seeded = cachedDataset(join(HERE, "node_modules", ".cache", "aiagent-bench"), "10k");
const meta = JSON.parse(readFileSync(seeded.replace(/\.db$/, ".json"), "utf8"));

// Every statement run, by its text, while `counting`.
const counts = new Map<string, number>();
let counting = false;
const Database = createRequire(join(root, "package.json"))("better-sqlite3");
const Statement = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1"));
for (const m of ["run", "get", "all", "iterate"]) {
  const original = Statement[m];
  Statement[m] = function (this: { source: string }, ...args: unknown[]) {
    if (counting) {
      const k = this.source.replace(/\s+/g, " ").trim().slice(0, 70);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
}

const dir = mkdtempSync(join(tmpdir(), "aiagent-list-reads-"));
try {
  copyFileSync(seeded, join(dir, "t.db"));
  const { openSqliteStore } = await import(pathToFileURL(join(root, "src/storage/sqlite/index.ts")).href);
  const store = openSqliteStore(join(dir, "t.db"), { synchronous: "OFF" });
  const accountId: string = meta.account_id;
  const lineage = [`person:${accountId}:${meta.email}`];
  const page = async () => {
    await Promise.all([
      store.accounts.byId(accountId),
      store.refreshTokens.lineageNotBefore(lineage),
      store.apiKeys.listForAccount(accountId),
    ]);
    await store.contacts.listVersion(accountId);
  };
  for (let i = 0; i < 2000; i++) {
    await nextTask();
    await page();
  }
  counting = true;
  for (let i = 0; i < 1000; i++) {
    await nextTask();
    await page();
  }
  counting = false;
  console.log(`${root}: statements per page`);
  for (const [k, n] of counts) console.log(`  ${(n / 1000).toFixed(2)}  ${k}`);
  const pages = Number(opt.pages);
  const timings: string[] = [];
  for (let r = 0; r < Number(opt.rounds); r++) {
    let cpu = 0;
    for (let i = 0; i < pages; i++) {
      await nextTask();
      const c = process.cpuUsage();
      await page();
      const d = process.cpuUsage(c);
      cpu += d.user + d.system;
    }
    timings.push((cpu / pages).toFixed(2));
  }
  console.log(`  CPU per page, µs: ${timings.join(", ")}`);
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
