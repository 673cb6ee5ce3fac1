import type { IdempotencyRepository } from "../../../domain/idempotency/repository.js";
import { type IdempotencyRow, toIdempotencyRecord } from "../../idempotency-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** Idempotency keys in SQLite. */
export function sqliteIdempotency(db: Db): Sync<IdempotencyRepository> {
  const find = db.prepare<[string, string], IdempotencyRow>(
    "SELECT * FROM idempotency_keys WHERE owner = ? AND key = ?",
  );
  const insert = db.prepare(
    `INSERT INTO idempotency_keys (owner, key, request_hash, answer, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (owner, key) DO UPDATE SET request_hash = excluded.request_hash, answer = excluded.answer,
       created_at = excluded.created_at WHERE idempotency_keys.created_at < ?`,
  );
  const prune = db.prepare(
    "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ? LIMIT ?)",
  );
  return {
    find: (owner, key) => {
      const r = find.get(owner, key);
      return r && toIdempotencyRecord(r);
    },
    insert: (r, staleBefore) =>
      insert.run(r.owner, r.key, r.requestHash, r.answer, r.createdAt, staleBefore).changes === 1,
    prune: (before, limit) => prune.run(before, limit).changes,
  };
}
