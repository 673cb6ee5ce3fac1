/**
 * The frame's read pattern, as its code makes it (src/frame/browser): opening a frame reads the newest page of
 * its conversation (offset 0, limit 100), and a frame that polls (streams unusable) then re-reads its tail
 * (offset = messages it has, limit 100) until something changes. Re-opening the frame (a reload, a new tab) reads
 * the same newest page again. Pages nobody read before stand for frames opened on other conversations.
 */
export interface FramePage {
  /** The cache key a page cache would use: conversation, offset, limit (the message count is fixed here). */
  key: string;
  conversationId: string;
  accessToken: string;
  offset: number;
  limit: number;
}

export interface FrameMixShape {
  /** Pages read once per rotation (frames opened on other conversations). */
  newPages: number;
  /** Tail polls a polling frame makes after each open. */
  pollsPerOpen: number;
}

/**
 * One rotation: for each new page, one open of a frame that is re-opened (one of `frames`, in turn) and its tail
 * polls. `frames` supplies the conversations that are re-opened; `fresh(i)` the i-th page read only once.
 */
export function frameMix(
  frames: { conversationId: string; accessToken: string; messages: number }[],
  fresh: (i: number) => { conversationId: string; accessToken: string; offset: number },
  shape: FrameMixShape,
  limit = 100,
): FramePage[] {
  const page = (conversationId: string, accessToken: string, offset: number): FramePage => ({
    key: `${conversationId}:${offset}:${limit}`,
    conversationId,
    accessToken,
    offset,
    limit,
  });
  const out: FramePage[] = [];
  for (let i = 0; i < shape.newPages; i++) {
    const f = fresh(i);
    out.push(page(f.conversationId, f.accessToken, f.offset));
    const again = frames[i % frames.length]!;
    out.push(page(again.conversationId, again.accessToken, 0));
    for (let p = 0; p < shape.pollsPerOpen; p++)
      out.push(page(again.conversationId, again.accessToken, Math.min(again.messages, limit)));
  }
  return out;
}

/**
 * What an exact LRU page cache of each size would answer for this rotation repeated forever: the share of reads it
 * serves (the second lap of the rotation, so every page has been seen once), from each read's stack distance.
 */
export function lruHitRatios(keys: readonly string[], sizes: readonly number[]): Record<number, number> {
  const stack: string[] = [];
  const distances: number[] = [];
  for (let lap = 0; lap < 2; lap++) {
    for (const k of keys) {
      const at = stack.indexOf(k);
      if (lap === 1) distances.push(at === -1 ? Number.POSITIVE_INFINITY : at);
      if (at !== -1) stack.splice(at, 1);
      stack.unshift(k);
    }
  }
  return Object.fromEntries(sizes.map((n) => [n, distances.filter((d) => d < n).length / distances.length]));
}

/** Summary of a rotation for the report: how much of it re-reads, and how much a cache would have to hold. */
export function rereadProfile(pages: readonly FramePage[], sizes: readonly number[]) {
  const keys = pages.map((p) => p.key);
  const distinct = new Set(keys).size;
  return {
    requests_per_rotation: keys.length,
    distinct_pages: distinct,
    reread_share: 1 - distinct / keys.length,
    lru_hit_ratio_by_entries: lruHitRatios(keys, sizes),
  };
}
