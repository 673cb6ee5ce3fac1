// A preload for a server measured by bench/repro/read-cost.ts (`node --expose-gc --import
// <built>/bench/repro/alloc-probe.js ...`): SIGUSR2 opens a window, the next SIGUSR2 closes it and writes what the
// heap did in it to AIAGENT_ALLOC_OUT (JSON). Each edge forces a young collection, and V8's GC profiler records the
// heap before and after every collection in between, so the bytes allocated (what each collection found used beyond
// what the one before it left) and the bytes a scavenge moved to the old generation (promoted) are exact, not sampled.
// AIAGENT_ALLOC_PROFILE (a path): the window also runs V8's sampling heap profiler with collected objects kept
// (every AIAGENT_ALLOC_INTERVAL bytes, 256 by default), its profile written there (which functions allocated).
// AIAGENT_PROBE_GC_ONLY: SIGUSR2 only runs a full collection (read-cost.ts does before it counts instructions).
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { GCProfiler, getHeapStatistics } from "node:v8";

const gc = (globalThis as { gc?: (o?: { type: string }) => void }).gc;
if (!gc) throw new Error("alloc-probe needs node --expose-gc");
const session = new Session();
session.connect();
const post = (method: string, params?: object) =>
  new Promise<unknown>((ok, fail) => session.post(method, params ?? {}, (e, r) => (e ? fail(e) : ok(r))));

interface Space {
  spaceName: string;
  spaceUsedSize: number;
}
interface Side {
  heapStatistics: { usedHeapSize: number };
  heapSpaceStatistics: Space[];
}
const oldUsed = (s: Side) => s.heapSpaceStatistics.find((x) => x.spaceName === "old_space")?.spaceUsedSize ?? 0;

let profiler: GCProfiler | undefined;
let startUsed = 0;
let busy = false;

process.on("SIGUSR2", () => {
  if (busy) return;
  busy = true;
  void (async () => {
    try {
      if (process.env.AIAGENT_PROBE_GC_ONLY) {
        // Before a count of instructions: a full collection now, so none is likely to fall in the counted window.
        gc();
        process.stdout.write("\nALLOC-PROBE collected\n");
        return;
      }
      if (!profiler) {
        if (process.env.AIAGENT_ALLOC_PROFILE)
          await post("HeapProfiler.startSampling", {
            samplingInterval: Number(process.env.AIAGENT_ALLOC_INTERVAL ?? 256),
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
        gc({ type: "minor" });
        profiler = new GCProfiler();
        profiler.start();
        startUsed = getHeapStatistics().used_heap_size;
        process.stdout.write("\nALLOC-PROBE open\n");
        return;
      }
      gc({ type: "minor" });
      const stats = profiler.stop()?.statistics as unknown as { gcType: string; beforeGC: Side; afterGC: Side }[];
      profiler = undefined;
      let allocated = 0;
      let promoted = 0;
      let prev = startUsed;
      const counts: Record<string, number> = {};
      for (const s of stats) {
        allocated += s.beforeGC.heapStatistics.usedHeapSize - prev;
        prev = s.afterGC.heapStatistics.usedHeapSize;
        counts[s.gcType] = (counts[s.gcType] ?? 0) + 1;
        if (s.gcType === "Scavenge") promoted += oldUsed(s.afterGC) - oldUsed(s.beforeGC);
      }
      const profileOut = process.env.AIAGENT_ALLOC_PROFILE;
      if (profileOut) {
        const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: unknown };
        writeFileSync(profileOut, JSON.stringify(profile));
      }
      writeFileSync(process.env.AIAGENT_ALLOC_OUT ?? "/dev/stdout", JSON.stringify({ allocated, promoted, counts }));
      process.stdout.write("\nALLOC-PROBE closed\n");
    } finally {
      busy = false;
    }
  })();
});
