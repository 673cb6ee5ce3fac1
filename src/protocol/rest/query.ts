import { percentDecode } from "./percent.js";

/**
 * The query string's parameters as decoded [name, value] pairs, in order, refusing what URLSearchParams would
 * silently repair (see percentDecode). `+` is a space, as in HTML forms. Empty segments (`a=1&&b=2`) are skipped.
 */
export function parseQuery(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  if (query === "") return pairs;
  for (const segment of query.split("&")) {
    if (segment === "") continue;
    const eq = segment.indexOf("=");
    const name = percentDecode(eq < 0 ? segment : segment.slice(0, eq), "query", true);
    pairs.push([name, percentDecode(eq < 0 ? "" : segment.slice(eq + 1), name, true)]);
  }
  return pairs;
}
