import type { IdempotencyRecord, IdempotencyRepository } from "../../domain/idempotency/repository.js";
import { type IdempotencyRow, toIdempotencyRecord } from "../idempotency-rows.js";
import type { PgDb } from "./db.js";

/**
 * Idempotency keys in PostgreSQL. Two writers of one key: the second's INSERT waits for the first's unit of work,
 * then finds its row (ON CONFLICT) and records nothing, so only one write commits under a key, on any instance.
 */
export function pgIdempotency(db: PgDb): IdempotencyRepository {
  return {
    find: async (owner, key) => {
      const [r] = await db.rows<IdempotencyRow>(
        "idempotency_find",
        "SELECT * FROM idempotency_keys WHERE owner = $1 AND key = $2",
        [owner, key],
      );
      return r && toIdempotencyRecord(r);
    },
    insert: async (r: IdempotencyRecord, staleBefore: number) =>
      (await db.count(
        "idempotency_insert",
        `INSERT INTO idempotency_keys (owner, key, request_hash, answer, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (owner, key) DO UPDATE SET request_hash = excluded.request_hash, answer = excluded.answer,
           created_at = excluded.created_at WHERE idempotency_keys.created_at < $6`,
        [r.owner, r.key, r.requestHash, r.answer, r.createdAt, staleBefore],
      )) === 1,
    prune: (before, limit) =>
      db.unit(() =>
        db.count(
          "idempotency_prune",
          `DELETE FROM idempotency_keys WHERE (owner, key) IN (
             SELECT owner, key FROM idempotency_keys WHERE created_at < $1 LIMIT $2)`,
          [before, limit],
        ),
      ),
  };
}
