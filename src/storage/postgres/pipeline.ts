import { createRequire } from "node:module";
import type { PoolClient, QueryResult, QueryResultRow } from "pg";
import pg from "pg";

/** One statement of a pipeline; named ones are prepared once per connection, unnamed ones parsed each time. */
export interface Statement {
  name?: string | undefined;
  text: string;
  values?: unknown[] | undefined;
}

// bigint columns hold epoch milliseconds and counters: well inside a double's exact range.
export const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** node-postgres' row parser (public as pg/lib/result; not in its type declarations). */
interface PgResult<R extends QueryResultRow> extends QueryResult<R> {
  addFields(fields: unknown): void;
  parseRow(fields: unknown): R;
  addRow(row: R): void;
  addCommandComplete(msg: unknown): void;
}
const Result = createRequire(import.meta.url)("pg/lib/result.js") as new <R extends QueryResultRow>(
  rowMode: undefined,
  t: typeof types,
) => PgResult<R>;

/** The parts of node-postgres' connection a submitted query writes to. */
interface Wire {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(m: { text: string; name?: string | undefined }): void;
  bind(m: { statement?: string | undefined; values: unknown[]; valueMapper?: unknown }): void;
  describe(m: { type: "P"; name: string }): void;
  execute(m: { portal: string }): void;
  sync(): void;
  sendCopyFail(msg: string): void;
}

const prepareValue = (createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue(v: unknown): unknown })
  .prepareValue;

/**
 * Several statements sent in one round trip (Parse/Bind/Execute each, one Sync), answered in order: a unit's BEGIN
 * with its first statement, writes whose results nobody waits for with the next statement or the COMMIT. They run
 * one after the other as separate statements, each seeing the ones before, exactly as if sent one by one; an error
 * skips the rest (the server discards everything up to the Sync) and fails the whole pipeline.
 *
 * node-postgres sends one statement per round trip; this is a "submittable" (its extension point, as pg-cursor is).
 * The client records a statement as prepared on its ParseComplete under the active query's `name`, so `name` and
 * `text` follow the statement being answered.
 */
class Pipeline {
  /** The statement being answered: on an error, the one that failed (those before it ran). */
  private i = 0;
  private readonly results: PgResult<QueryResultRow>[];
  private failed: Error | undefined;
  /** The statement whose row could not be read (`failed`). */
  private failedAt = 0;

  constructor(
    private readonly statements: readonly Statement[],
    private readonly done: (e: Error | undefined, r: PgResult<QueryResultRow>[], at: number) => void,
  ) {
    this.results = statements.map(() => new Result(undefined, types));
  }

  get name(): string | undefined {
    return this.statements[this.i]?.name;
  }

  get text(): string | undefined {
    return this.statements[this.i]?.text;
  }

  submit(connection: Wire): Error | null {
    let values: unknown[][];
    try {
      // Mapped before anything is written: a value that cannot be sent fails the pipeline with nothing sent.
      values = this.statements.map((s) => (s.values ?? []).map(prepareValue));
    } catch (e) {
      return e as Error;
    }
    for (const s of this.statements) {
      const previous = s.name === undefined ? undefined : connection.parsedStatements[s.name];
      if (previous !== undefined && previous !== s.text)
        return new Error(`Prepared statements must be unique - '${s.name}' was used for a different statement`);
    }
    const parsing = new Set<string>();
    connection.stream.cork?.();
    try {
      for (const [n, s] of this.statements.entries()) {
        if (!(s.name && (connection.parsedStatements[s.name] !== undefined || parsing.has(s.name)))) {
          connection.parse({ text: s.text, name: s.name });
          if (s.name) parsing.add(s.name);
        }
        connection.bind({ statement: s.name, values: values[n]! });
        connection.describe({ type: "P", name: "" });
        connection.execute({ portal: "" });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: unknown }): void {
    this.results[this.i]?.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown }): void {
    const r = this.results[this.i];
    if (!r || this.failed) return;
    try {
      r.addRow(r.parseRow(msg.fields));
    } catch (e) {
      this.failed = e as Error;
      this.failedAt = this.i;
    }
  }

  handleCommandComplete(msg: unknown): void {
    this.results[this.i]?.addCommandComplete(msg);
    this.i++;
  }

  handleEmptyQuery(): void {
    this.i++;
  }

  handleError(e: Error): void {
    this.done(this.failed ?? e, this.results, this.failed ? this.failedAt : this.i);
  }

  handleReadyForQuery(): void {
    this.done(this.failed, this.results, this.failed ? this.failedAt : this.i);
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: Wire): void {
    connection.sendCopyFail("No source stream defined");
  }

  handleCopyData(): void {}
}

/** What ran of a pipeline that failed: the statements before `at` completed, with these results. */
const ran = new WeakMap<object, { at: number; results: QueryResult[] }>();

/**
 * Runs `statements` on `client` in one round trip; resolves with each one's result, in order. On a failure,
 * `completedBefore` tells how far it got.
 */
export function pipeline(client: PoolClient, statements: readonly Statement[]): Promise<QueryResult[]> {
  return new Promise((resolve, reject) => {
    const p = new Pipeline(statements, (e, r, at) => {
      if (!e) return resolve(r);
      if (typeof e === "object") ran.set(e, { at, results: r });
      reject(e);
    });
    (client as unknown as { query(p: Pipeline): void }).query(p);
  });
}

/**
 * Of a pipeline's failure: how many of its statements completed (each one's result in `results`), the failed one
 * being the next; undefined for any other error (nothing can be said of what ran).
 */
export function completedBefore(e: unknown): { at: number; results: QueryResult[] } | undefined {
  return typeof e === "object" && e !== null ? ran.get(e) : undefined;
}
