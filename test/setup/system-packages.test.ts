import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runToEnd } from "../helpers/run-to-end.js";
import { missingPackages } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { installMissing } from "./install-system-packages.js";

// `npm test` on a machine without Debian's packages: it installs them when it can, and otherwise skips only the suites
// that need them, each with one line naming the package. The lookups are pointed at paths that do not exist.
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "aiagent-syspkg-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function vitest(files: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  // Not this run's AIAGENT_TEST_RUN either: the nested run names its own PostgreSQL databases, or its teardown would
  // drop this run's (the migrated template, and databases other files are using) while they still run.
  const childEnv = Object.fromEntries(
    Object.entries(env).filter(([k]) => !k.startsWith("VITEST") && k !== "AIAGENT_TEST_RUN"),
  );
  // Every file of this run skips: nothing of one file's can leak into the next, so they share a worker and its loaded
  // modules (--no-isolate) instead of each loading the service's module graph again in a fresh process.
  const r = await runToEnd(process.execPath, ["node_modules/vitest/vitest.mjs", "run", "--no-isolate", ...files], {
    cwd: ROOT,
    env: childEnv,
    killAfterMs: scaled(120_000),
  });
  return { code: r.code, out: r.stdout + r.stderr };
}

/** How a test file starts a browser: by hand, or through the browser fixtures of test/helpers/browser-fixtures.ts. */
const BROWSER_START = /launchBrowser\(|chromium\.launch\(|\b(console|embedding|consoleAndFrame)ForFile\(/;

describe("Debian packages the suites need", () => {
  it(
    "without chromium or protoc, the suites needing them skip with one line each and the run passes",
    async () => {
      // Every suite that starts a browser, found by reading the test files, so a new one cannot forget its guard.
      const browserFiles = readdirSync(join(ROOT, "test"), { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".test.ts"))
        .map((f) => `test/${f}`)
        .filter((f) => BROWSER_START.test(readFileSync(join(ROOT, f), "utf8")))
        .sort();
      expect(browserFiles).toContain("test/frame/embed.test.ts");
      const files = ["test/clients/python-client.test.ts", ...browserFiles];
      const r = await vitest(files, {
        ...process.env,
        AIAGENT_TEST_CHROMIUM: join(dir, "no-chromium"),
        AIAGENT_TEST_PROTOC: join(dir, "no-protoc"),
        AIAGENT_TEST_INSTALL: "0",
        NO_COLOR: "1",
      });
      expect(r.code, r.out).toBe(0);
      const chromium = "needs Debian's chromium; install with: sudo apt-get install chromium";
      expect(
        r.out
          .split("\n")
          .filter((l) => l.startsWith("SKIPPED "))
          .sort(),
      ).toEqual(
        [
          "SKIPPED test/clients/python-client.test.ts: needs Debian's protobuf-compiler; install with: sudo apt-get install protobuf-compiler",
          ...browserFiles.map((f) =>
            f === "test/frame/openai-agent.test.ts"
              ? `SKIPPED ${f} (its test in the frame): ${chromium}`
              : `SKIPPED ${f}: ${chromium}`,
          ),
        ].sort(),
      );
      // Only the tests in a browser or with protoc skip: the agent's streaming tests beside them still run.
      expect(r.out).toMatch(new RegExp(`Test Files\\s+1 passed \\| ${files.length - 1} skipped \\(${files.length}\\)`));
      expect(r.out).toMatch(/Tests\s+3 passed \| \d+ skipped \(\d+\)/);
      expect(r.out).not.toMatch(/failed/);
    },
    scaled(150_000),
  );

  it("with them present (here: pointed at existing programs), nothing is reported missing", () => {
    const env = { ...process.env, AIAGENT_TEST_CHROMIUM: process.execPath, AIAGENT_TEST_PROTOC: process.execPath };
    expect(missingPackages(["chromium", "protobuf-compiler"], env)).toEqual([]);
    expect(
      missingPackages(["chromium", "protobuf-compiler"], { ...env, AIAGENT_TEST_CHROMIUM: "/nonexistent" }),
    ).toEqual(["chromium"]);
  });

  it("as root with apt-get, installs what is missing without a prompt, reading the package lists when the first try fails", () => {
    const bin = join(dir, "bin");
    const log = join(dir, "apt.log");
    rmSync(bin, { recursive: true, force: true });
    // A stand-in apt-get: records how it was called; `install` fails until `update` ran, then "installs" chromium
    // and protoc where the lookups expect them.
    const fakeApt = `#!/bin/sh
{ printf '%s|' "$*" "DEBIAN_FRONTEND=$DEBIAN_FRONTEND"; if [ -t 0 ]; then echo tty; else echo no-tty; fi; } >> "${log}"
case "$1" in
  update) touch "${dir}/updated" ;;
  install) [ -f "${dir}/updated" ] || exit 100
    printf '#!/bin/sh\\n' > "${dir}/chromium"; chmod +x "${dir}/chromium"
    printf '#!/bin/sh\\n' > "${dir}/protoc"; chmod +x "${dir}/protoc" ;;
esac
`;
    writeFileSync(join(dir, "apt-get"), fakeApt);
    chmodSync(join(dir, "apt-get"), 0o755);
    const env = {
      ...process.env,
      PATH: `${dir}:${process.env.PATH}`,
      AIAGENT_TEST_CHROMIUM: join(dir, "chromium"),
      AIAGENT_TEST_PROTOC: join(dir, "protoc"),
    };
    const said: string[] = [];

    installMissing({ ...env, AIAGENT_TEST_INSTALL: "0" }, (l) => said.push(l), true);
    expect(said).toEqual([]);
    installMissing(env, (l) => said.push(l), false); // not root: nothing to do but skip
    expect(said).toEqual([]);

    installMissing(env, (l) => said.push(l), true);
    const calls = readFileSync(log, "utf8").trim().split("\n");
    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatch(/^install -y -qq .*chromium protobuf-compiler/);
    expect(calls[1]).toMatch(/^update -qq\|/);
    expect(calls[2]).toBe(calls[0]);
    for (const c of calls) expect(c).toMatch(/\|DEBIAN_FRONTEND=noninteractive\|no-tty$/);
    expect(said[0]).toMatch(/^npm test: installing Debian packages chromium protobuf-compiler/);
    expect(missingPackages(["chromium", "protobuf-compiler"], env)).toEqual([]);
  });
});
