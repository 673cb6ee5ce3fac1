import { parentPort } from "node:worker_threads";
import { ExtractFailure, type ExtractJob, extract } from "./extract.js";

// The extraction worker: one job at a time from worker-pool.ts, answered with the result or the failure.
parentPort?.on("message", async (m: { id: number; job: ExtractJob }) => {
  try {
    parentPort?.postMessage({ id: m.id, result: await extract(m.job) });
  } catch (e) {
    const failure = e instanceof ExtractFailure;
    const overflow = e instanceof RangeError && /call stack/i.test(e.message);
    parentPort?.postMessage({
      id: m.id,
      failure: failure || overflow,
      error: overflow
        ? "the document is nested too deeply to read"
        : failure
          ? e.message
          : String((e as Error)?.message ?? e),
    });
  }
});
