import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Ended, runToEnd } from "../helpers/run-to-end.js";
import { scaled } from "../helpers/time-scale.js";

// `npm run bench:live` end to end at a toy size: the harness builds, starts the bare stream server and the service,
// runs W1–W4 against both on raw loopback streams and writes its report. What is checked is that every row ran and
// that the figures that are promises (nothing missed or repeated, every revoked stream ended, the others receiving,
// the whole backlog read) hold; never how fast.
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "aiagent-bench-live-smoke-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runBench(only = "W1,W2,W3,W4", out = dir): Promise<Ended> {
  const args = ["--streams", "32", "--scale", "1k", "--idle-seconds", "1", "--w2-seconds", "1", "--rate", "40"];
  return runToEnd(
    process.execPath,
    [
      "--import",
      "tsx",
      "bench/live.ts",
      ...args,
      "--revoke",
      "8",
      "--heartbeat-ms",
      "300",
      "--only",
      only,
      "--out",
      out,
    ],
    { cwd: ROOT, killAfterMs: scaled(240_000) },
  );
}

/** The report a run wrote in `out`. */
function reportIn(out: string) {
  const file = readdirSync(out).find((f) => f.startsWith("live-") && f.endsWith(".json"));
  expect(file).toBeDefined();
  return JSON.parse(readFileSync(join(out, file!), "utf8"));
}

describe("npm run bench:live", () => {
  it("runs W1–W4 against the service and the bare server and writes its report", {
    timeout: scaled(300_000),
  }, async () => {
    const r = await runBench();
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stdout).toContain("| W1 |");
    const report = reportIn(dir);
    expect(report.options.streamsRun).toBe(32);
    for (const name of ["service", "bare"]) {
      const rows = report.results[name];
      expect(rows.W1.streams, name).toBe(32);
      expect(rows.W1.failed, name).toBe(0);
      expect(rows.W1.beatsPerSec, `${name}: heartbeats every 300 ms`).toBeGreaterThan(0);
      expect(rows.W2.deliveries, name).toBeGreaterThan(0);
      expect([rows.W2.missed, rows.W2.duplicated], name).toEqual([0, 0]);
      // What the writes cost the server, and the generator's own share (it must not be the limit).
      expect(rows.W2.cpuMsPerEvent, name).toBeGreaterThanOrEqual(0);
      expect(rows.W2.generatorCpuPct, name).toBeGreaterThan(0);
      expect(rows.W3.revoked, name).toBe(8);
      expect(rows.W3.ended, name).toBe(8);
      expect(rows.W3.othersGot, name).toBe(rows.W3.othersExpected);
      expect(rows.W3.othersExpected, name).toBeGreaterThan(0);
      expect(rows.W4.events, name).toBe(2020);
    }
  });

  // W5 needs a PostgreSQL server (the suite's, on 127.0.0.1:5432): two instances on one database, half of the
  // streams on each, the writes through both; every write reaches every stream of its conversation once.
  it("runs W5 on two PostgreSQL instances, half of the streams on each", { timeout: scaled(300_000) }, async () => {
    const out = join(dir, "w5");
    const r = await runBench("W5", out);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const w5 = reportIn(out).results.service.W5;
    expect(w5, r.stderr.slice(-2000)).toBeDefined();
    expect(w5.instances).toBe(2);
    expect(w5.streamsPerInstance).toEqual([16, 16]);
    expect(w5.deliveries).toBeGreaterThan(0);
    expect([w5.missed, w5.duplicated]).toEqual([0, 0]);
    expect(w5.cpuMsPerEvent, "both instances' CPU is counted").toBeGreaterThan(0);
    expect(r.stdout).toContain("| W5 |");
  });
});
