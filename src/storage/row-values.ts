// The conversions where the two back ends' rows differ: PostgreSQL hands a bigint over as a string and a boolean
// as true/false, SQLite a number and 0/1.

/** A time or count column as a number. */
export type Big = number | string;

/** A nullable time column as a number or null. */
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A boolean column as read (true/false or 0/1). */
export const isSet = (v: boolean | number): boolean => v === true || v === 1;

/** How a back end writes a boolean: SQLite binds 0/1, PostgreSQL true/false. */
export type Flag = (b: boolean) => boolean | number;
export const bit: Flag = (b) => (b ? 1 : 0);
export const bool: Flag = (b) => b;
