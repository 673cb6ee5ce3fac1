/** Each cache map's count of entries added or moved last; the entry last in a map is the one stamped with it. */
const stamps = new WeakMap<Map<string, unknown>, { n: number }>();

/** What a cache's entry carries for `reused` and `added`: its forms, and when it was last added or moved last. */
export interface LruEntry {
  forms: Map<unknown, unknown>;
  /** The map's stamp when this entry was added or moved last (0 before). */
  lastAt: number;
}

function stamp(entries: Map<string, unknown>): number {
  let s = stamps.get(entries);
  if (!s) {
    s = { n: 0 };
    stamps.set(entries, s);
  }
  return ++s.n;
}

/**
 * A remembered entry read again (the message pages' and contact lists' caches): moved last in the map's order, which
 * keeps the least recently used first, and the form the reader makes of it, if one was made (a hit, counted). An
 * entry already last stays: moving it (a delete and a set) costs the map a shrink or a rehash every few reads, a
 * call into V8's runtime (1.6k instructions a read with one page remembered, measured).
 */
export function reused<E extends LruEntry>(
  entries: Map<string, E>,
  key: string,
  hit: E,
  form: unknown,
  counts: { hits: number },
): unknown {
  if (hit.lastAt !== stamps.get(entries)?.n) {
    entries.delete(key);
    entries.set(key, hit);
    hit.lastAt = stamp(entries);
  }
  const made = hit.forms.get(form);
  if (made !== undefined) counts.hits++;
  return made;
}

/** Adds an entry last in a cache's map. */
export function added<E extends LruEntry>(entries: Map<string, E>, key: string, entry: E): void {
  entries.set(key, entry);
  entry.lastAt = stamp(entries);
}
