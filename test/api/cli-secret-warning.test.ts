import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { aiagent } from "../helpers/cli.js";

// Issue 31, item 8: every command printed the AIAGENT_SECRETS warning; it is said once, when the secret is made.
const dir = mkdtempSync(join(tmpdir(), "aiagent-cli-warning-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the generated key-encryption secret, from the command line", () => {
  it("is warned about by the command that generated it, and by no command after", async () => {
    const env = { AIAGENT_DB: join(dir, "aiagent.db"), AIAGENT_SECRETS: "", AIAGENT_SECRETS_FILE: "" };
    const first = await aiagent(["account", "create", "--email", "first@example.com"], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr.match(/set AIAGENT_SECRETS/g)).toHaveLength(1);
    for (const args of [
      ["account", "list"],
      ["api-key", "create", "--email", "first@example.com"],
    ]) {
      const r = await aiagent(args, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr, args.join(" ")).not.toContain("AIAGENT_SECRETS");
    }
  });
});
