import { randomBytes, randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { newTimeOrderedId } from "../../src/domain/ids.js";
import { openDatabase } from "../../src/storage/sqlite/database.js";
import { cachedDataset } from "../lib/dataset.js";

// What a token issue's unit of work writes to SQLite's log, by the kind of session id it stores: random (uuid v4, as
// before session 21) or time-ordered (uuid v7, `newTimeOrderedId`). Each variant gets its own copy of the bench's 10k
// dataset (`npm run bench -- --quick` seeds it once), opened as the service opens it (group commit: synchronous=NORMAL,
// the checkpoint left to the caller), and runs units as the store does: BEGIN IMMEDIATE, then per unit a savepoint,
// the refresh token's insert and the contact's read, then one COMMIT for the batch (group commit puts the units of
// one turn of the event loop in one transaction). Users rotate over 256, as the bench's S4 does.
//
//   node --import tsx bench/repro/session-ids.ts [--units 12000] [--rounds 2] [--batches 1,3,10]
//
// Reports, per unit: the log frames written (counted in the -wal file: each is a 4 kB page written once per commit
// that changed it), and this process's CPU for the unit (statements and COMMIT) and for the COMMIT alone.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values: opt } = parseArgs({
  options: {
    units: { type: "string", default: "12000" },
    rounds: { type: "string", default: "2" },
    batches: { type: "string", default: "1,3,10" },
    cache: { type: "string", default: join(ROOT, "node_modules", ".cache", "aiagent-bench") },
  },
});
const seeded = cachedDataset(opt.cache!, "10k");
const work = mkdtempSync(join(tmpdir(), "aiagent-session-ids-"));
const kinds: Record<string, (at: number) => string> = {
  "random (v4)": () => randomUUID(),
  "time-ordered (v7)": newTimeOrderedId,
};

/** Frames in the log file now (its header is 32 bytes, each frame a 24-byte header and a page). */
function walFrames(path: string): number {
  const wal = readFileSync(`${path}-wal`);
  if (wal.length < 32) return 0;
  return Math.floor((wal.length - 32) / (24 + wal.readUInt32BE(8)));
}

try {
  const dbs = Object.entries(kinds).map(([name, id], n) => {
    const path = join(work, `v${n}.db`);
    copyFileSync(seeded, path);
    const db = openDatabase(path, { synchronous: "FULL", groupCommit: true });
    db.pragma("wal_autocheckpoint = 0");
    const bot = db.prepare("SELECT account_id, chatbot_id FROM chatbots LIMIT 1").get() as {
      account_id: string;
      chatbot_id: string;
    };
    const insert = db.prepare(
      `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at,
         revoked_at, last_used_at, last_origin, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const contact = db.prepare("SELECT contact_id FROM contacts WHERE account_id = ? AND user_id = ?");
    return { name, db, path, bot, insert, contact, id };
  });
  let user = 0;
  for (const batch of String(opt.batches).split(",").map(Number))
    for (let round = 1; round <= Number(opt.rounds); round++)
      for (const d of round % 2 ? dbs : [...dbs].reverse()) {
        // The log starts over (the service's checkpointer copies it in the background): each run counts its own frames.
        d.db.pragma("wal_checkpoint(TRUNCATE)");
        const units = Number(opt.units);
        let frames = 0;
        let commit = 0;
        let all = 0;
        for (let i = 0; i < units; i += batch) {
          const t0 = process.cpuUsage();
          d.db.exec("BEGIN IMMEDIATE");
          for (let j = 0; j < batch; j++) {
            const now = Date.now();
            const u = `ab_${(user++ % 256).toString(36)}`;
            d.db.exec("SAVEPOINT unit");
            d.insert.run(
              randomBytes(32).toString("hex"),
              d.id(now),
              d.bot.account_id,
              d.bot.chatbot_id,
              u,
              now,
              now + 30 * 86_400_000,
              null,
              now,
              "",
              "wrk",
            );
            d.contact.get(d.bot.account_id, u);
            d.db.exec("RELEASE unit");
          }
          const c0 = process.cpuUsage();
          d.db.exec("COMMIT");
          const c = process.cpuUsage(c0);
          const t = process.cpuUsage(t0);
          commit += c.user + c.system;
          all += t.user + t.system;
          // A checkpoint now and then, outside the timings, keeps the log from growing without bound.
          if ((i / batch) % 100 === 99) {
            frames += walFrames(d.path);
            d.db.pragma("wal_checkpoint(TRUNCATE)");
          }
        }
        frames += walFrames(d.path);
        console.log(
          `batch ${String(batch).padStart(2)}, round ${round}, ${d.name.padEnd(17)}: ${(frames / units).toFixed(2)} frames, ` +
            `${(all / units).toFixed(1)} µs CPU per unit, of which COMMIT ${(commit / units).toFixed(1)} µs`,
        );
      }
  for (const { db } of dbs) db.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
