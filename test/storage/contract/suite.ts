import { afterAll, afterEach, beforeEach, describe } from "vitest";
import { backends, type Harness } from "./harness.js";

/** A group of contract cases, given the current case's store. */
export type Cases = (h: () => Harness) => void;

/**
 * Runs the groups of cases on every back end: each case gets a fresh, empty store. The contract is split over
 * several files (contract-*.test.ts) only so that they run in parallel; each names the groups it runs.
 */
export async function runContract(groups: readonly Cases[]): Promise<void> {
  for (const backend of backends) {
    const skip = await backend.skipReason();
    if (skip) console.warn(`storage contract on ${backend.name} skipped: ${skip}`);
    describe.skipIf(skip !== undefined)(`storage contract: ${backend.name}`, () => {
      afterAll(async () => {
        await backend.teardown?.();
      });
      let harness: Harness | undefined;
      beforeEach(async () => {
        harness = await backend.open();
      });
      afterEach(async () => {
        await harness?.close();
        harness = undefined;
      });
      const h = () => harness!;
      for (const cases of groups) cases(h);
    });
  }
}
