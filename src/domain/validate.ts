import { invalidArgument } from "./errors.js";

/** Longest accepted identifier or short text field (user ids, names, e-mails, search terms). */
export const MAX_SHORT_TEXT = 256;
/** Longest accepted message content, in characters. */
export const MAX_CONTENT = 8000;

/** A required text field: present, not too long, no control characters. */
export function requireText(field: string, value: string, max = MAX_SHORT_TEXT): string {
  if (value.length === 0) throw invalidArgument(field, "is required");
  return optionalText(field, value, max);
}

/** An optional text field: may be empty; otherwise not too long and without control characters. */
export function optionalText(field: string, value: string, max = MAX_SHORT_TEXT): string {
  if (value.length > max) throw invalidArgument(field, `must be at most ${max} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) throw invalidArgument(field, "must not contain control characters");
  return value;
}

/** Message text: required, bounded, and not blank. */
export function requireContent(field: string, value: string): string {
  optionalText(field, value, MAX_CONTENT);
  if (value.trim().length === 0) throw invalidArgument(field, "is required");
  return value;
}

/** A page request: limit within [1, max] (default when absent), offset >= 0 (0 when absent). */
export function page(limit: number | undefined, offset: number | undefined, defaultLimit: number, maxLimit = 100): { limit: number; offset: number } {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)) {
    throw invalidArgument("limit", `must be an integer from 1 to ${maxLimit}`);
  }
  if (offset !== undefined && (!Number.isInteger(offset) || offset < 0)) {
    throw invalidArgument("offset", "must be an integer of 0 or more");
  }
  return { limit: limit ?? defaultLimit, offset: offset ?? 0 };
}
