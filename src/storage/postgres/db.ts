import { AsyncLocalStorage } from "node:async_hooks";
import type { Pool, PoolClient, QueryConfig, QueryResult, QueryResultRow } from "pg";
import { checkout, type HeldConnection } from "./checkout.js";
import { isConnectionLoss, storageError } from "./errors.js";
import { completedBefore, pipeline, type Statement } from "./pipeline.js";
import { ReadBatcher, readOnly } from "./read-batch.js";

export { checkout, type HeldConnection } from "./checkout.js";

/**
 * How long a unit of work aborted by a serialization failure or a deadlock is tried again before `busy` reaches the
 * caller: the conflict is transient (the other unit committed), so the budget is time, not a count of tries.
 */
export const RETRY_BUDGET_MS = 3000;
/** The first back-off; each further try doubles it (capped), and a random part of it is slept ("full jitter"). */
const FIRST_BACKOFF_MS = 2;
const MAX_BACKOFF_MS = 100;

/** A conflict PostgreSQL resolved by aborting this unit: running it again from the start can succeed. */
function retryable(e: unknown): boolean {
  const code = (e as { extra?: { cause?: { code?: string } } }).extra?.cause?.code;
  return code === "40001" || code === "40P01";
}

/** Pools that reach the server through a transaction pooler: nothing may be prepared by name on them. */
const unprepared = new WeakSet<Pool>();

/** Marks `pool` as behind a transaction pooler (see PgRunner's `prepared`). */
export function markUnprepared(pool: Pool): void {
  unprepared.add(pool);
}

/** The statement as `pool` may run it: without its name behind a transaction pooler. */
export function statementFor<Q extends { name?: string | undefined }>(pool: Pool, q: Q): Q {
  if (!unprepared.has(pool) || q.name === undefined) return q;
  const { name: _, ...unnamed } = q;
  return unnamed as Q;
}

/** What the repositories run SQL through: the open unit of work's connection, or the pool. */
export interface PgDb {
  /**
   * A named (prepared once per connection) statement. Statements made in one turn of the event loop share a round
   * trip: in a unit of work all of them (sent at the turn's end, or with the COMMIT when the unit ends first), outside
   * one the plain reads (read-batch.ts).
   */
  rows<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]>;
  /** How many rows a named statement changed. */
  count(name: string, text: string, values: unknown[]): Promise<number>;
  /**
   * A named write whose outcome nobody waits for (an insert of new rows under fresh keys): in a unit of work it is
   * sent with the unit's next statement or its COMMIT, in the same round trip; outside one it runs at once. A
   * failure fails the unit; `failed`, when given, makes the statement's own failure the error the unit (outside
   * one, the call) fails with (a write that checks a condition by failing, e.g. replies.ts's reply_complete).
   */
  write(name: string, text: string, values: unknown[], failed?: (e: unknown) => unknown): Promise<void>;
  /**
   * The open unit of work queued events of this account (a no-op outside one): their placing may go with the unit's
   * `COMMIT`, in the same round trip (PgRunner.placeAtCommit).
   */
  queued(accountId: string): void;
  /** Runs fn in the open unit of work, or in a new one (READ COMMITTED: the statements' row locks order writers). */
  unit<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Rows the open unit of work wrote and still holds locked, kept so a read of them in the same unit costs no round
   * trip; undefined outside a unit (a read there must see other writers' commits).
   */
  readonly held: Map<string, unknown> | undefined;
}

/** A statement of a unit not sent yet; `answer` settles its caller's promise (none for a write nobody waits for). */
interface Queued {
  statement: Statement;
  answer?: { resolve(r: QueryResult): void; reject(e: unknown): void };
  /** What the unit fails with when this statement fails (PgDb.write). */
  failed?: (e: unknown) => unknown;
}

/**
 * Places events queued by a unit of work right after its `COMMIT`, in the same round trip (sequencer.ts): the
 * statements of one placing of the account, or undefined when this process is placing the account's events already
 * (the unit then leaves its events to that one's successor). `settle` is told how it went: the placing's result, or
 * undefined when it did not run or failed (the events stay queued, for `Sequencer.place`).
 */
export interface CommitPlacer {
  atCommit(accountId: string): { statements: Statement[]; settle(placed: QueryResult | undefined): void } | undefined;
}

/** The connection of a unit of work, and the rows it holds (see PgDb.held). */
interface OpenUnit {
  client: PoolClient;
  held: Map<string, unknown>;
  /**
   * What is still to be sent: the unit's BEGIN until its first statement (a unit costs no round trip of its own to
   * open), writes nobody waits for (PgDb.write), and statements made in this turn of the event loop, which go out
   * together at the turn's end, or with the COMMIT when the unit ends first.
   */
  pending: Queued[];
  /** Whether a send at the end of this turn is scheduled. */
  scheduled: boolean;
  /** Whether anything was sent (a ROLLBACK is then owed on failure). */
  sent: boolean;
  /** The accounts whose events the unit queued (PgDb.queued). */
  queued: Set<string> | undefined;
  /** The failure of a round trip sent at a turn's end (its callers were told; the unit must not commit). */
  failure?: { e: unknown };
}

/** Routes statements to the connection of the unit of work running in this async context, else to the pool. */
export class PgRunner implements PgDb {
  private readonly current = new AsyncLocalStorage<OpenUnit>();
  /** Reads outside a unit of work, sent together when made in the same turn. */
  private readonly reads: ReadBatcher;
  /** Units of work run again after a conflict, since start (a metric). */
  retries = 0;
  private placer: CommitPlacer | undefined;
  private placedAtCommit: ((accountIds: string[]) => void) | undefined;

  /**
   * @param prepared named statements, prepared once per connection; false behind a transaction-pooling pooler, where
   *   the next transaction may run on a server connection that never saw the Parse (each statement is then planned
   *   afresh, unnamed).
   * @param begin what opens a READ COMMITTED unit (it may set the unit's lock timeout in the same round trip).
   */
  constructor(
    private readonly pool: Pool,
    private readonly prepared = true,
    private readonly begin_ = "BEGIN",
  ) {
    this.reads = new ReadBatcher(pool);
  }

  async rows<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return (await this.query<R>(name, text, values)).rows;
  }

  async count(name: string, text: string, values: unknown[]): Promise<number> {
    return (await this.query(name, text, values)).rowCount ?? 0;
  }

  async write(name: string, text: string, values: unknown[], failed?: (e: unknown) => unknown): Promise<void> {
    const current = this.current.getStore();
    if (current) current.pending.push({ statement: this.statement(name, text, values), ...(failed ? { failed } : {}) });
    else
      try {
        await this.query(name, text, values);
      } catch (e) {
        throw failed ? failed(e) : e;
      }
  }

  queued(accountId: string): void {
    const current = this.current.getStore();
    if (current) (current.queued ??= new Set()).add(accountId);
  }

  /**
   * A unit that queued events of one account sends their placing after its `COMMIT`, in the same round trip, when
   * `placer` has no placing of the account under way (else the unit's events wait for the next placing, which covers
   * every writer that committed meanwhile). `placed` is told, in the unit's async context, which accounts' events a
   * committed unit placed so: nobody needs to place them again.
   */
  placeAtCommit(placer: CommitPlacer, placed: (accountIds: string[]) => void): void {
    this.placer = placer;
    this.placedAtCommit = placed;
  }

  get held(): Map<string, unknown> | undefined {
    return this.current.getStore()?.held;
  }

  /**
   * A READ COMMITTED unit: its writes order themselves by the row locks they take (INSERT … ON CONFLICT, UPDATE …
   * RETURNING), in one order (conversation, then contact; the account's event counter is taken after the commit, by
   * the placing: sequencer.ts), so racing writers wait for each other instead of aborting. A deadlock (a caller breaking that order) is run again like a conflict.
   */
  unit<T>(fn: () => Promise<T>): Promise<T> {
    return this.current.getStore() ? fn() : this.retrying(this.begin_, fn);
  }

  /**
   * A unit of work as SERIALIZABLE as SQLite's (which runs one writer at a time), for units that read, decide and
   * then write (an API key rotation, the first signing key): PostgreSQL aborts one of two that would interleave,
   * and it is run again from the start. The callback must therefore touch nothing but the store.
   */
  serializable<T>(fn: () => Promise<T>): Promise<T> {
    return this.current.getStore()
      ? fn()
      : this.retrying(this.begin_.replace("BEGIN", "BEGIN ISOLATION LEVEL SERIALIZABLE"), fn);
  }

  /** Runs the unit, again after a jittered, growing back-off while it aborts on a conflict, for RETRY_BUDGET_MS. */
  private async retrying<T>(begin: string, fn: () => Promise<T>): Promise<T> {
    const giveUpAt = Date.now() + RETRY_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.begin(begin, fn);
      } catch (e) {
        const backoff = Math.random() * Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt);
        if (!retryable(e) || Date.now() + backoff >= giveUpAt) throw e;
        this.retries++;
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }

  private async begin<T>(begin: string, fn: () => Promise<T>): Promise<T> {
    const held = await checkout(this.pool);
    const unit: OpenUnit = {
      client: held.client,
      held: new Map(),
      // "BEGIN; SET LOCAL …" (behind a pooler) is two statements: a pipeline parses each on its own.
      pending: begin.split("; ").map((text) => ({ statement: { text } })),
      scheduled: false,
      sent: false,
      queued: undefined,
    };
    const opened = unit.pending.length;
    try {
      const result = await this.current.run(unit, fn);
      // A unit that sent nothing and has nothing to write has nothing to commit.
      if (unit.sent || unit.pending.length > opened) {
        let rolledBack = false;
        unit.pending.push({
          statement: { text: "COMMIT" },
          answer: { resolve: (r) => void (rolledBack = r.command === "ROLLBACK"), reject: () => undefined },
        });
        await this.commit(unit, held);
        // A statement failed in a round trip nobody waited for (a write sent with a read the unit did not await):
        // the server aborted the transaction, and its COMMIT only rolled back. The unit fails with that failure.
        if (rolledBack) throw unit.failure?.e ?? new Error("the unit of work was rolled back at its COMMIT");
      }
      return result;
    } catch (e) {
      // Statements never sent fail with the unit (their callers may still be waiting).
      for (const q of unit.pending.splice(0)) q.answer?.reject(storageError(e));
      if (unit.sent)
        await held.client.query("ROLLBACK").catch((rollbackError: unknown) => {
          // The connection is gone (killed, server restarted): it must not go back to the pool.
          held.lost ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
      throw storageError(e);
    } finally {
      held.release();
    }
  }

  /**
   * Sends the unit's last statements and its `COMMIT` (queued last), with the placing of its events when the placer
   * takes them: a placing that fails after the commit leaves the unit committed (its events stay queued for the next
   * placing, which the announcing of the commit asks for).
   */
  private async commit(unit: OpenUnit, held: HeldConnection): Promise<void> {
    const [accountId, ...others] = unit.queued ?? [];
    const placing = accountId !== undefined && others.length === 0 ? this.placer?.atCommit(accountId) : undefined;
    if (!placing || accountId === undefined) return this.send(unit);
    const commitAt = unit.pending.length - 1;
    let placed: QueryResult | undefined;
    unit.pending.push(
      ...placing.statements.map((statement, n, all) => ({
        statement,
        answer: {
          resolve: (r: QueryResult) => {
            if (n === all.length - 1) placed = r;
          },
          reject: () => undefined,
        },
      })),
    );
    try {
      await this.send(unit, commitAt);
    } catch (e) {
      // Committed when the COMMIT completed: only the placing failed.
      if ((completedBefore(e)?.at ?? 0) <= commitAt) throw e;
      if (isConnectionLoss(e)) held.lost ??= e as Error;
    } finally {
      placing.settle(placed);
    }
    if (placed) this.placedAtCommit?.([accountId]);
  }

  /**
   * A statement of the open unit: queued, and sent at the end of this turn of the event loop with whatever else the
   * unit queued meanwhile (or with its COMMIT, when the unit ends first: a read the unit does not wait for then
   * costs no round trip of its own), in one round trip.
   */
  private inUnit<R extends QueryResultRow>(unit: OpenUnit, statement: Statement): Promise<QueryResult<R>> {
    const answer = new Promise<QueryResult<R>>((resolve, reject) => {
      unit.pending.push({ statement, answer: { resolve: resolve as (r: QueryResult) => void, reject } });
    });
    // A caller that never waits for it (the unit failed first) must not leave an unhandled rejection behind.
    answer.catch(() => undefined);
    if (!unit.scheduled) {
      unit.scheduled = true;
      process.nextTick(() => {
        unit.scheduled = false;
        // Its failure reaches the statements' callers; the unit then fails and rolls back (also when none of them
        // waited: its COMMIT then answers ROLLBACK).
        this.send(unit).catch((e: unknown) => {
          unit.failure ??= { e };
        });
      });
    }
    return answer;
  }

  /**
   * Sends everything the unit has queued, in one round trip, and answers each statement's caller.
   * @param commitAt where the unit's COMMIT is in the queue, when statements follow it (PgRunner.commit).
   */
  private async send(unit: OpenUnit, commitAt?: number): Promise<void> {
    const queued = unit.pending.splice(0);
    if (queued.length === 0) return;
    unit.sent = true;
    let results: QueryResult[];
    try {
      results =
        queued.length === 1
          ? [await unit.client.query(queued[0]!.statement as QueryConfig)]
          : await pipeline(
              unit.client,
              queued.map((q) => q.statement),
            );
    } catch (e) {
      // After a COMMIT that completed, the unit's statements stand: their callers get their answers.
      const ran = completedBefore(e);
      const committed = commitAt !== undefined && ran !== undefined && ran.at > commitAt;
      // The statement that failed (when alone, the only one) may name what the unit fails with.
      const cause = queued[queued.length === 1 ? 0 : (ran?.at ?? -1)]?.failed?.(e) ?? e;
      for (const [i, q] of queued.entries())
        if (committed && i < ran.at) q.answer?.resolve(ran.results[i]!);
        else q.answer?.reject(storageError(cause));
      throw cause;
    }
    for (const [i, q] of queued.entries()) q.answer?.resolve(results[i]!);
  }

  /** The statement as this runner sends it: unnamed behind a transaction pooler. */
  private statement(name: string, text: string, values: unknown[]): Statement {
    return this.prepared ? { name, text, values } : { text, values };
  }

  private async query<R extends QueryResultRow>(name: string, text: string, values: unknown[]) {
    const current = this.current.getStore();
    if (current) return this.inUnit<R>(current, this.statement(name, text, values));
    if (readOnly(text)) return (await this.reads.read(this.statement(name, text, values))) as QueryResult<R>;
    const held = await checkout(this.pool);
    try {
      return await held.client.query<R>(this.statement(name, text, values) as QueryConfig);
    } catch (e) {
      if (isConnectionLoss(e)) held.lost ??= e as Error;
      throw storageError(e);
    } finally {
      held.release();
    }
  }
}
