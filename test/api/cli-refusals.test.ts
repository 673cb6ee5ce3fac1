import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aiagent as runAiagent } from "../helpers/cli.js";
import { scaled } from "../helpers/time-scale.js";

// The command's refusals (what it accepts: cli.test.ts, in parallel). Each case runs the real command several
// times (a second or two each, more on a busy machine).
vi.setConfig({ testTimeout: scaled(120_000) });

const dir = mkdtempSync(join(tmpdir(), "aiagent-cli-"));
const db = join(dir, "cli.db");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The account the refusals name, made as cli.test.ts makes it.
beforeAll(async () => {
  expect((await aiagent("account", "create", "--email", "cli@example.com", "--db", db, "--json")).code).toBe(0);
});
const aiagent = (...args: string[]) => runAiagent(args);

describe("the aiagent command", () => {
  it(
    "refuses bad arguments with a clear message and a non-zero exit",
    async () => {
      const unknown = await aiagent("frobnicate", "--db", db);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain("unknown command");
      const missing = await aiagent("account", "create", "--db", db);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("--email");
      const badOpt = await aiagent("account", "create", "--email", "x@example.com", "--colour", "red", "--db", db);
      expect(badOpt.code).toBe(2);
      expect(badOpt.stderr).toContain("colour");
      const dup = await aiagent("account", "create", "--email", "cli@example.com", "--db", db, "--json");
      expect(dup.code).toBe(1);
      expect(JSON.parse(dup.stdout).error).toContain("already exists");
      const origin = await aiagent(
        "chatbot",
        "create",
        "--email",
        "cli@example.com",
        "--name",
        "x",
        "--allowed-origin",
        "not a url",
        "--db",
        db,
      );
      expect(origin.code).toBe(1);
      expect(origin.stderr).toContain("allowed-origin");
    },
    scaled(120_000),
  );
});
