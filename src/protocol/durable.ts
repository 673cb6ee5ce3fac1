import type { AnyHandler } from "./call.js";

/** Resolves once every write made so far is on disk; undefined when none is waiting. */
export type DurabilityBarrier = () => Promise<void> | undefined;

/**
 * Handlers whose answers (results, errors, each streamed item) leave only after the writes they may have seen
 * are durable: with group commit the storage acknowledges commits before their fsync, so the wait moves here,
 * where many requests share one fsync instead of each blocking the event loop for its own.
 */
export function durableHandlers(
  handlers: Record<string, AnyHandler>,
  barrier: DurabilityBarrier,
): Record<string, AnyHandler> {
  const out: Record<string, AnyHandler> = {};
  for (const [name, h] of Object.entries(handlers)) {
    out[name] = ((req: never, call) => {
      const result = h(req, call);
      return Symbol.asyncIterator in (result as object)
        ? durableStream(result as AsyncIterable<unknown>, barrier)
        : durableResult(result as Promise<unknown>, barrier);
    }) as AnyHandler;
  }
  return out;
}

async function durableResult(result: Promise<unknown>, barrier: DurabilityBarrier): Promise<unknown> {
  try {
    const value = await result;
    const wait = barrier();
    if (wait) await wait;
    return value;
  } catch (e) {
    // An error may follow a write ("your message was saved"): it too waits for the disk.
    await barrier()?.catch(() => undefined);
    throw e;
  }
}

async function* durableStream(items: AsyncIterable<unknown>, barrier: DurabilityBarrier): AsyncGenerator<unknown> {
  try {
    for await (const item of items) {
      const wait = barrier();
      if (wait) await wait;
      yield item;
    }
  } catch (e) {
    await barrier()?.catch(() => undefined);
    throw e;
  }
}
