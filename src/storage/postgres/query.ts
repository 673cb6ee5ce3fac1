import type { QueryResultRow } from "pg";
import type { PgDb } from "./db.js";

// The shapes most repository methods take, so each states only its statement and its row's mapping.

/** A named write whose count nobody needs. */
export async function execute(db: PgDb, name: string, text: string, values: readonly unknown[]): Promise<void> {
  await db.count(name, text, [...values]);
}

/** Whether a named write changed any row (an update or delete that found its row, an insert not skipped). */
export async function changed(db: PgDb, name: string, text: string, values: readonly unknown[]): Promise<boolean> {
  return (await db.count(name, text, [...values])) > 0;
}

/** The first row of a named read as the domain's record, or undefined. */
export async function first<R extends QueryResultRow, T>(
  db: PgDb,
  name: string,
  text: string,
  values: unknown[],
  to: (r: R) => T,
): Promise<T | undefined> {
  const [r] = await db.rows<R>(name, text, values);
  return r && to(r);
}

/** Every row of a named read as the domain's records. */
export async function all<R extends QueryResultRow, T>(
  db: PgDb,
  name: string,
  text: string,
  values: unknown[],
  to: (r: R) => T,
): Promise<T[]> {
  return (await db.rows<R>(name, text, values)).map(to);
}
