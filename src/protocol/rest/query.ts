import { percentDecode, plainAscii } from "./percent.js";

/**
 * The query string's parameters as decoded [name, value] pairs, in order, refusing what URLSearchParams would
 * silently repair (see percentDecode). `+` is a space, as in HTML forms. Empty segments (`a=1&&b=2`) are skipped.
 */
export function parseQuery(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  if (query === "") return pairs;
  // Nearly every query (uuids, numbers, the frame's access token): nothing to decode in any part, found by one scan
  // of the whole query rather than one per part (percentDecode would take each part as it is).
  const plain = plainAscii(query);
  for (const segment of query.split("&")) {
    if (segment === "") continue;
    const eq = segment.indexOf("=");
    const rawName = eq < 0 ? segment : segment.slice(0, eq);
    const rawValue = eq < 0 ? "" : segment.slice(eq + 1);
    if (plain) {
      pairs.push([rawName, rawValue]);
      continue;
    }
    const name = percentDecode(rawName, "query", true);
    pairs.push([name, percentDecode(rawValue, name, true)]);
  }
  return pairs;
}
