/**
 * Values read from the file, kept `ttlMs` in memory and bounded (all dropped at `max` entries, no scan). Only for
 * reads whose staleness for that long is harmless, or whose writers in this process `forget` the key: one process
 * serves a SQLite file.
 */
export class ShortMemo<V> {
  private readonly entries = new Map<string, { at: number; value: V }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 10_000,
  ) {}

  /** The value kept for `key` if it is younger than ttlMs, else `read()`'s, kept from now. */
  get(key: string, read: () => V): V {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.value;
    const value = read();
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { at: now, value });
    return value;
  }

  /** Drops what is kept for `key` (its row was just written). */
  forget(key: string): void {
    this.entries.delete(key);
  }
}
