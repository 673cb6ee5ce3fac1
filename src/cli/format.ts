/** An instant for people and for --json alike: ISO 8601 UTC, or null when there is none. */
export function isoTime(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Rows as aligned columns under a header line; an empty table says so. */
export function table(header: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return empty;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
