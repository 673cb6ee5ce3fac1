import { invalidArgument } from "../../domain/errors.js";

// A raw query holds only printable ASCII: anything else must arrive percent-encoded.
const RAW_OK = /^[\x21-\x7e]*$/;

/**
 * The query string's parameters as decoded [name, value] pairs, in order, refusing what URLSearchParams would
 * silently repair: a malformed escape (`%zz`), bytes that are not UTF-8 (`%FF`), an encoded lone surrogate
 * (`%ED%A0%80`) and raw non-ASCII characters. `+` is a space, as in HTML forms. Empty segments (`a=1&&b=2`) are skipped.
 */
export function parseQuery(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  if (query === "") return pairs;
  for (const segment of query.split("&")) {
    if (segment === "") continue;
    const eq = segment.indexOf("=");
    const rawName = eq < 0 ? segment : segment.slice(0, eq);
    const rawValue = eq < 0 ? "" : segment.slice(eq + 1);
    const name = decode(rawName);
    if (name === undefined) throw invalidArgument("query", "a parameter name is not valid percent-encoded UTF-8");
    const value = decode(rawValue);
    if (value === undefined) throw invalidArgument(name, "is not valid percent-encoded UTF-8");
    pairs.push([name, value]);
  }
  return pairs;
}

/** One name or value decoded, or undefined when its encoding is broken. */
function decode(raw: string): string | undefined {
  if (!RAW_OK.test(raw)) return undefined;
  const spaced = raw.includes("+") ? raw.replaceAll("+", " ") : raw;
  if (!spaced.includes("%")) return spaced;
  try {
    // decodeURIComponent refuses malformed escapes, invalid UTF-8 and encoded surrogates (URIError).
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}
