/** How a unit of work is isolated. */
export interface UnitOptions {
  /**
   * Its writes order themselves by the rows they update (each repository write is correct under concurrency on its
   * own, as a message append is), so the back end need not serialise the whole unit: concurrent writers wait for
   * each other's row locks instead of being aborted and retried (PostgreSQL: READ COMMITTED, not SERIALIZABLE).
   */
  rowLocks?: boolean;
}

/**
 * Runs fn as one unit of work over the repositories `R` it touches: every write in it lands, or (when it throws)
 * none does. A use case names the `R` it needs; the store's `transaction` (over every repository) satisfies any.
 */
export type Transact<R> = <T>(fn: (tx: R) => Promise<T>, o?: UnitOptions) => Promise<T>;
