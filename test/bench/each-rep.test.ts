import { describe, expect, it } from "vitest";
import { eachRepTargets, pinnedRatios } from "../../bench/lib/each-rep.js";
import type { ScenarioResult } from "../../bench/lib/report.js";

// Issue 49's targets are met only in every repetition of a run, each repetition's rows against each other.
const row = (id: string, reps: [rps: number, cpu: number, failed?: number][]): ScenarioResult => ({
  id,
  name: id,
  server: "x",
  kind: "service",
  rps: 0,
  p50Us: 0,
  p99Us: 0,
  cpuUsPerReq: 0,
  errors: 0,
  requests: 0,
  reps: reps.length,
  perRep: reps.map(([rps, cpu, failed]) => ({ rps, cpuUsPerReq: cpu, failed: failed ?? 0 })),
});

describe("issue 49's targets, each repetition", () => {
  it("a ratio met by the median but missed in one repetition is not met, and says which", () => {
    // S4 ÷ P4: 1.30, 1.20, 1.40 (median 1.30 ≥ 1.25, but the second repetition misses).
    const [t] = eachRepTargets([
      row("S4", [
        [1300, 300],
        [1200, 300],
        [1400, 300],
      ]),
      row("P4", [
        [1000, 400],
        [1000, 400],
        [1000, 400],
      ]),
    ]);
    expect(t).toMatchObject({
      name: "S4 ÷ P4 (oidc-provider client_credentials)",
      measured: "1.30, 1.20, 1.40",
      met: false,
    });
    expect(t!.score).toBeCloseTo(1.2 / 1.25);
  });

  it("CPU ratios divide each repetition by the baseline of the same repetition", () => {
    // B0-o moves between repetitions; S1-o ÷ B0-o stays at 1.9 in each, so it is met.
    const ts = eachRepTargets([
      row("B0-o", [
        [1000, 70],
        [1000, 100],
      ]),
      row("S1-o", [
        [1000, 133],
        [1000, 190],
      ]),
      row("S3a-o-1m", [
        [1000, 140],
        [1000, 240],
      ]),
    ]);
    expect(ts.map((t) => [t.name, t.measured, t.met])).toEqual([
      ["S3a-o-1m ÷ B0-o", "2.00, 2.40", false],
      ["S1-o ÷ B0-o", "1.90, 1.90", true],
    ]);
  });

  it("a row at the offered rate is divided by the bare server measured next to it, when the run measured one", () => {
    const s1o = row("S1-o", [
      [1000, 190],
      [1000, 190],
    ]);
    s1o.adjacentB0oCpuUsPerReq = [100, 95];
    const [t] = eachRepTargets([
      row("B0-o", [
        [1000, 70],
        [1000, 70],
      ]),
      s1o,
    ]);
    expect(t).toMatchObject({ name: "S1-o ÷ B0-o", measured: "1.90, 2.00", met: true });
  });

  it("a failed request in any repetition of either row meets nothing", () => {
    const [t] = eachRepTargets([
      row("S6", [
        [500, 1000],
        [500, 1000],
      ]),
      row("S6-pg", [
        [400, 1100],
        [400, 1100, 3],
      ]),
    ]);
    expect(t).toMatchObject({ name: "S6-pg ÷ S6 (the service's own CPU)", met: false, score: 0 });
    expect(t!.measured).toContain("3 failed requests");
  });

  it("a row the run did not measure gives no target, and the pinned rows are reported without one", () => {
    expect(eachRepTargets([row("S4", [[1, 1]])])).toEqual([]);
    expect(
      pinnedRatios([
        row("S4-pin", [
          [1000, 1],
          [800, 1],
        ]),
        row("S4-pg-pin", [
          [500, 1],
          [600, 1],
        ]),
      ]),
    ).toEqual([{ name: "S4-pg-pin ÷ S4-pin, req/s", ratios: [0.5, 0.75] }]);
  });
});
