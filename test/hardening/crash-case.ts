import { expect, it } from "vitest";
import { runCrashTest } from "../../scripts/crash-test.js";
import { aiagentCommand } from "../helpers/command.js";
import { scaled } from "../helpers/time-scale.js";
import { expectNoSecrets } from "./support.js";

// Bounded: 20 kill-and-restart rounds (about 1 s each) in all, in two files of 10 that run in parallel
// (crash.test.ts, crash-more.test.ts), each on its own database; more with AIAGENT_CRASH_ROUNDS (per file), e.g. for a
// soak run.
const ROUNDS = Number(process.env.AIAGENT_CRASH_ROUNDS ?? 10);

export function crashCase(): void {
  it(
    `SIGKILL at random moments, ${ROUNDS} times: every acknowledged message survives, message_order has no gap, integrity_check is ok`,
    async () => {
      const r = await runCrashTest({ rounds: ROUNDS, writers: 3, startMs: scaled(60_000), command: aiagentCommand() });
      expect(r.perRound).toHaveLength(ROUNDS);
      // Reach: every round wrote before its kill, and most kills cut writes in flight (an idle kill proves nothing).
      for (const [i, round] of r.perRound.entries()) {
        expect(round.acknowledged, `round ${i + 1} acknowledged nothing`).toBeGreaterThan(0);
        // A writer stops only because of the kill (or its bound): never an error answer or a failure before the kill.
        for (const stop of round.stops)
          expect(["cut by the kill", "between requests at the kill", "bound reached"], `round ${i + 1}`).toContain(
            stop,
          );
      }
      const cut = r.perRound.filter((round) => round.inFlightAtKill > 0).length;
      expect(cut, `rounds whose kill found writes in flight: ${cut} of ${ROUNDS}`).toBeGreaterThanOrEqual(
        Math.ceil(ROUNDS * 0.75),
      );
      expect(r.acknowledged).toBeGreaterThanOrEqual(r.perRound.reduce((n, round) => n + round.acknowledged, 0));
      expect(r.lost).toEqual([]);
      expect(r.gaps).toEqual([]);
      expect(r.integrity).toBe("ok");
      expect(r.stored).toBeGreaterThanOrEqual(r.acknowledged);
      expectNoSecrets(r.output, r.secrets);
    },
    scaled(300_000),
  );
}
