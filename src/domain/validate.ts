import { invalidArgument } from "./errors.js";

/** Longest accepted identifier or short text field (user ids, names, e-mails, search terms). */
export const MAX_SHORT_TEXT = 256;

// Any C0 or C1 control character, DEL, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// The same, but tab, line feed and carriage return are allowed (message text has lines).
// eslint-disable-next-line no-control-regex
export const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

// With the u flag a surrogate pair is one code point, so only an unpaired half matches.
const LONE_SURROGATE = /\p{Cs}/u;

/** A required text field: present, not too long, no control characters. */
export function requireText(field: string, value: string, max = MAX_SHORT_TEXT): string {
  if (value.length === 0) throw invalidArgument(field, "is required");
  return optionalText(field, value, max);
}

/**
 * An optional single-line text field: may be empty; otherwise not too long, valid Unicode, no control characters or
 * line breaks.
 */
export function optionalText(field: string, value: string, max = MAX_SHORT_TEXT): string {
  return checkText(field, value, max, CONTROL);
}

/** A required identifier (user_id, e-mail): the same rules as requireText, also no leading or trailing blanks. */
export function requireId(field: string, value: string, max = MAX_SHORT_TEXT): string {
  requireText(field, value, max);
  if (value.trim() !== value) throw invalidArgument(field, "must not start or end with blanks");
  return value;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A required e-mail address: an identifier with one @ and no blanks. */
export function requireEmail(field: string, value: string): string {
  requireId(field, value);
  if (!EMAIL.test(value)) throw invalidArgument(field, "must be an e-mail address");
  return value;
}

/** An optional e-mail address: empty, or an e-mail address by the same rule as requireEmail. */
export function optionalEmail(field: string, value: string): string {
  return value === "" ? value : requireEmail(field, value);
}

function checkText(field: string, value: string, max: number, forbidden: RegExp): string {
  if (value.length > max) throw invalidArgument(field, `must be at most ${max} characters`);
  if (forbidden.test(value)) throw invalidArgument(field, "must not contain control characters");
  // A lone surrogate cannot be stored as UTF-8; SQLite would silently change it.
  if (LONE_SURROGATE.test(value)) throw invalidArgument(field, "must be valid Unicode");
  return value;
}

/** Message text: required, at most `max` characters (limits.ts), and not blank; may have several lines. */
export function requireContent(field: string, value: string, max: number): string {
  checkText(field, value, max, CONTROL_BUT_LINES);
  if (value.trim().length === 0) throw invalidArgument(field, "is required");
  return value;
}

/** Optional text with lines (a greeting): may be empty; otherwise not longer than `max`, no control characters. */
export function optionalContent(field: string, value: string, max: number): string {
  return checkText(field, value, max, CONTROL_BUT_LINES);
}

/** Largest offset of a page: deeper paging is a scan, not an inbox (search or filter instead). */
export const MAX_OFFSET = 1_000_000;

/** A page request: limit within [1, max] (default when absent), offset within [0, MAX_OFFSET] (0 when absent). */
export function page(
  limit: number | undefined,
  offset: number | undefined,
  defaultLimit: number,
  maxLimit = 100,
): { limit: number; offset: number } {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)) {
    throw invalidArgument("limit", `must be an integer from 1 to ${maxLimit}`);
  }
  if (offset !== undefined && (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET)) {
    throw invalidArgument("offset", `must be an integer from 0 to ${MAX_OFFSET}`);
  }
  return { limit: limit ?? defaultLimit, offset: offset ?? 0 };
}
