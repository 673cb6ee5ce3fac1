import type { IdempotencyRecord } from "../domain/idempotency/repository.js";

/** A row of `idempotency_keys`, the same on both back ends. */
export interface IdempotencyRow {
  owner: string;
  key: string;
  request_hash: string;
  answer: string;
  created_at: number | string;
}

/** The row as the domain's record (PostgreSQL may hand a bigint over as a string). */
export const toIdempotencyRecord = (r: IdempotencyRow): IdempotencyRecord => ({
  owner: r.owner,
  key: r.key,
  requestHash: r.request_hash,
  answer: r.answer,
  createdAt: Number(r.created_at),
});
