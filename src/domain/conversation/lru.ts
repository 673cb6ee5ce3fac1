/**
 * A remembered entry read again (the message pages' and contact lists' caches): moved last in the map's order, which
 * keeps the least recently used first, and the form the reader makes of it, if one was made (a hit, counted).
 */
export function reused<E extends { forms: Map<unknown, unknown> }>(
  entries: Map<string, E>,
  key: string,
  hit: E,
  form: unknown,
  counts: { hits: number },
): unknown {
  entries.delete(key);
  entries.set(key, hit);
  const made = hit.forms.get(form);
  if (made !== undefined) counts.hits++;
  return made;
}
