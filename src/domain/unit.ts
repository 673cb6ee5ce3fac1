/** How a unit of work is isolated. */
export interface UnitOptions {
  /**
   * Its writes order themselves by the rows they update (each repository write is correct under concurrency on its
   * own, as a message append is), so the back end need not serialise the whole unit: concurrent writers wait for
   * each other's row locks instead of being aborted and retried (PostgreSQL: READ COMMITTED, not SERIALIZABLE).
   */
  rowLocks?: boolean;
  /**
   * The unit calls only the repositories it is handed and appends no event: no unit of work inside it, no call through
   * the store's own repositories (which would wait for it to end), no entry in the event log. A back end may then run
   * it without what tells such calls apart (SQLite: the async contexts, while which Node hooks every promise of the
   * process, about 9% of a token issue's instructions). Its `events` refuses appends.
   */
  selfContained?: boolean;
}

/**
 * Runs fn as one unit of work over the repositories `R` it touches: every write in it lands, or (when it throws)
 * none does. A use case names the `R` it needs; the store's `transaction` (over every repository) satisfies any.
 */
export type Transact<R> = <T>(fn: (tx: R) => Promise<T>, o?: UnitOptions) => Promise<T>;
