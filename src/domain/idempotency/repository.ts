/** A write remembered under the key its client chose: what it was asked, and what it answered. */
export interface IdempotencyRecord {
  /** Who wrote it (the account and its principal): a key is only ever looked up within its owner's. */
  owner: string;
  key: string;
  /** A digest of the operation and its input: the same key with other input is refused. */
  requestHash: string;
  /** The first answer, as JSON. */
  answer: string;
  createdAt: number;
}

/**
 * Idempotency keys; written in the unit of work of the write they answer, so a key exists exactly when its write does.
 */
export interface IdempotencyRepository {
  /** The record under (owner, key), if any. */
  find(owner: string, key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Records the key unless one younger than `staleBefore` holds it already (an older one is replaced); answers
   * false when it does (another write with this key committed first).
   */
  insert(r: IdempotencyRecord, staleBefore: number): Promise<boolean>;
  /** Drops up to `limit` records older than `before`; answers the count. */
  prune(before: number, limit: number): Promise<number>;
}
