import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/ports.js";
import { scaled } from "../helpers/time-scale.js";
import { jsonValues, manualRun, runScript, shBlocks } from "./manual-run.js";

// The manual's own commands, run as written (see manual-run.ts): "The account API" and every line of "The `aiagent`
// command", each beside a service started by ./bin/aiagent serve (the walkthrough is in readme-commands.test.ts).
const { environment, startService } = manualRun();

describe("the manual's commands, as written", () => {
  it(
    '"The account API" runs as written: an owner signs in, makes a key, a chatbot and an operator',
    async () => {
      const [block, ...more] = shBlocks("The account API", "docs/account-api.md");
      expect(more).toEqual([]);
      const env = environment("account-api", await freePort());
      await startService("./bin/aiagent serve", env);
      const r = await runScript(block!, env);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      const values = jsonValues(r.stdout);
      expect(values[0].data.client_api_key).toMatch(/^cak_/);
      expect(values.find((v) => v.data?.name === "Returns desk")).toBeDefined();
      expect(values.find((v) => v.data?.caller_role === "operator")?.data.caller_email).toBe("sam@shop.example");
      expect(r.stdout).toMatch(/403$/m);
      const members = values.at(-1).data.members.map((m: { email: string; role: string }) => [m.email, m.role]);
      expect(members).toEqual([
        ["owner@shop.example", "admin"],
        ["sam@shop.example", "operator"],
      ]);
    },
    scaled(180_000),
  );
  it(
    'every line of "The `aiagent` command" runs, beside a service started by its serve line',
    async () => {
      const [block, ...more] = shBlocks("The `aiagent` command", "docs/cli.md");
      expect(more).toEqual([]);
      const lines = block!
        .replaceAll("\\\n", " ")
        .split("\n")
        .filter((l) => l.trim() !== "");
      const serve = lines.filter((l) => l.startsWith("./bin/aiagent serve"));
      expect(serve).toHaveLength(1);
      const env = environment("commands", await freePort());
      await startService(serve[0]!, env);
      const r = await runScript(lines.filter((l) => l !== serve[0]).join("\n"), env);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain("account you@example.com created");
      expect(r.stdout).toMatch(/chatbot Helper created/);
      expect(r.stdout).toContain("client_api_key (shown once): cak_");
      expect(r.stdout).toMatch(/1 key\(s\) revoked/);
      expect(r.stdout).toMatch(/new signing key \S+/);
      expect(lines.length).toBeGreaterThanOrEqual(8);
    },
    scaled(180_000),
  );
});
