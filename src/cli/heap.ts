import { setFlagsFromString } from "node:v8";

/**
 * On a machine with memory to spare V8 lets the old generation grow to four times what survived its last full
 * collection before collecting again, so every kept byte (the page cache, the token caches) counts about four times
 * in the process's peak. Twice is enough: measured in `npm run bench -- --only S1,S2c,S2g,S9n,S9m --reps 3`, peak RSS
 * 238 → 187 MB at the same CPU per request (1.3× took it to 166 MB but cost S9m 50% more CPU in collections).
 * V8 reads the factor at every collection, so setting it once the process runs takes effect; a
 * `node --heap-growing-percent=N` given by the operator wins.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a))) return;
  setFlagsFromString("--heap-growing-percent=100");
}
