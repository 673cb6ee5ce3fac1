import { expect, it } from "vitest";
import { runCrashTest } from "../../scripts/crash-test.js";
import { expectNoSecrets } from "./support.js";

// Bounded: 20 kill-and-restart rounds (about 1 s each); more with AIAGENT_CRASH_ROUNDS, e.g. for a soak run.
const ROUNDS = Number(process.env.AIAGENT_CRASH_ROUNDS ?? 20);

it(`SIGKILL at random moments, ${ROUNDS} times: every acknowledged message survives, message_order has no gap, integrity_check is ok`, async () => {
  const r = await runCrashTest({ rounds: ROUNDS, writers: 3 });
  expect(r.acknowledged).toBeGreaterThan(ROUNDS);
  expect(r.lost).toEqual([]);
  expect(r.gaps).toEqual([]);
  expect(r.integrity).toBe("ok");
  expect(r.stored).toBeGreaterThanOrEqual(r.acknowledged);
  expectNoSecrets(r.output, r.secrets);
}, 120_000);
