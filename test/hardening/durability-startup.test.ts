import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { durabilityFixture } from "./durability-fixture.js";
import { runCli, startChild, TEST_SECRETS } from "./support.js";

// Durability at start-up: a damaged, misplaced or missing database file.
const { children } = durabilityFixture();

describe("start-up", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "aiagent-start-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["garbage", () => Buffer.from("this is not a database at all ".repeat(200))],
    ["a zeroed header", () => Buffer.alloc(8192)],
  ])("a database file holding %s: `aiagent serve` exits non-zero and says why", async (name, content) => {
    const path = join(dir, `${name.replace(/\W/g, "-")}.db`);
    writeFileSync(path, content());
    const r = await runCli(["serve", "--db", path, "--port", "0"], {
      NODE_ENV: "production",
      AIAGENT_SECRETS: TEST_SECRETS,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot open database .*(not a database|malformed)/);
    // And it did not "repair" the file by replacing it.
    expect(statSync(path).size).toBe(content().length);
  });

  it("a path that is a directory fails the same way", async () => {
    const path = join(dir, "a-directory.db");
    mkdirSync(path);
    const r = await runCli(["serve", "--db", path, "--port", "0"], {
      NODE_ENV: "production",
      AIAGENT_SECRETS: TEST_SECRETS,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot open database");
  });

  it("a missing directory is created (a fresh clone has no ./data)", async () => {
    const path = join(dir, "new", "nested", "aiagent.db");
    const c = await startChild(path);
    children.push(c);
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    expect(existsSync(path)).toBe(true);
  });
});
