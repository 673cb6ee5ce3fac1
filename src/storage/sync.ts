/** A repository interface of the storage port with every method synchronous: what an embedded back end implements. */
export type Sync<R> = {
  [K in keyof R]: R[K] extends (...a: infer A) => Promise<infer T> ? (...a: A) => T : R[K];
};

/** Wraps each method of a synchronous repository so it answers through `run` (which returns a promise). */
export function asyncRepository<R extends object>(sync: Sync<R>, run: <T>(fn: () => T) => Promise<T>): R {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(sync as Record<string, unknown>)) {
    if (typeof f !== "function") continue;
    out[name] = (...args: unknown[]) => run(() => (f as (...a: unknown[]) => unknown)(...args));
  }
  return out as R;
}
