import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../frame/browser.js";
import { blocks, manualPages, ROOT, readPage } from "../helpers/docs.js";
import { scaled } from "../helpers/time-scale.js";

// The manual's own commands, read from README.md and docs/ and run as written (bash, from the checkout) against a
// service started as the README starts it: the walkthrough top to bottom, the pages that continue it, and every line
// of "The `aiagent` command". Only the environment is the test's: a database of its own (AIAGENT_DB) and a free port.
const dir = mkdtempSync(join(tmpdir(), "aiagent-readme-"));
const started = new Set<ChildProcess>();
afterAll(() => {
  for (const p of started) if (p.pid) process.kill(-p.pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** The ```sh blocks of the section with this heading, in README.md or a page of docs/. */
function shBlocks(heading: string, page = "README.md"): string[] {
  return blocks(page, heading);
}

function environment(name: string, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIAGENT_DB: join(dir, `${name}.db`),
    AIAGENT_PORT: String(port),
    AIAGENT_LOG_LEVEL: "warn",
  };
  delete env.NODE_ENV; // as in a newcomer's shell: not production, so the demo bootstrap runs
  return env;
}

/** Starts a README command that serves, in its own process group, and waits until the service answers /readyz. */
async function startService(command: string, env: NodeJS.ProcessEnv): Promise<{ output: () => string }> {
  const proc = spawn("bash", ["-c", command], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  started.add(proc);
  let output = "";
  proc.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  let exited = false;
  proc.on("exit", () => (exited = true));
  const url = `http://127.0.0.1:${env.AIAGENT_PORT}/readyz`;
  for (let i = 0; i < scaled(1200); i++) {
    if (exited) throw new Error(`"${command}" exited: ${output}`);
    if ((await fetch(url).catch(() => undefined))?.status === 200) return { output: () => output };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`"${command}" did not serve within two minutes: ${output}`);
}

/** Runs README lines in one bash, stopping at the first failing command. */
function runScript(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const proc = spawn("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: ROOT, env });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => proc.kill("SIGKILL"), 120_000);
    proc.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** The top-level JSON objects in a text, in order (braces inside strings are skipped). */
function jsonValues(text: string): any[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"' && depth > 0) inString = true;
    else if (c === "{" && depth++ === 0) start = i;
    else if (c === "}" && depth > 0 && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
  }
  return out;
}

describe("the manual's commands, as written", () => {
  it("names the command as ./bin/aiagent in every example", () => {
    for (const page of manualPages())
      for (const block of readPage(page).matchAll(/```sh\n([\s\S]*?)```/g))
        for (const line of block[1]!.split("\n"))
          expect(line, `an example in ${page} runs aiagent without ./bin/`).not.toMatch(/(^|[\s($])(npx )?aiagent /);
  });

  it(
    "the walkthrough works top to bottom on a fresh start",
    async () => {
      const [start, script, ...more] = shBlocks("Walkthrough");
      expect(start!.trim()).toBe("npm start");
      expect(more).toEqual([]);
      const env = environment("walkthrough", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(script!, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      // No step answered an error, and each step's answer is there.
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      expect(r.stdout).toContain("account you@example.com created");
      expect(r.stdout).toContain("it shows where your parcel is"); // the agent's answer, from examples/knowledge.json
      // curl prints no newline after a body: the last two bodies are the last two JSON values of the output.
      const [contacts, messages] = jsonValues(r.stdout).slice(-2);
      expect(contacts.data.data.contacts).toEqual([
        expect.objectContaining({ user_id: "customer-42", contact_name: "Ada Lovelace", unread_message_count: "1" }),
      ]);
      expect(messages.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
        ["user", "Where is my parcel?"],
        ["assistant", expect.stringContaining("tracking link")],
      ]);
    },
    scaled(240_000),
  );

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
    'the "Webhooks" commands work after the walkthrough, with its variables',
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const [hooks, ...more] = shBlocks("Webhooks", "docs/webhooks.md");
      expect(more).toEqual([]);
      const env = environment("webhooks", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(`${script}\n${hooks}`, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      // The endpoints, the closed conversation, the log, the deliveries and the disabled endpoint, in that order.
      const [endpoints, closed, log, deliveries, disabled] = jsonValues(r.stdout).slice(-5);
      expect(endpoints.data.endpoints).toHaveLength(1);
      expect(endpoints.data.endpoints[0]).not.toHaveProperty("secret");
      expect(closed.data.status).toBe("closed");
      expect(log.data.events.map((e: { type: string }) => e.type)).toEqual([
        "message.created",
        "message.created",
        "conversation.closed",
      ]);
      expect(deliveries.data.deliveries.map((d: { event_type: string }) => d.event_type)).toEqual([
        "conversation.closed",
      ]);
      expect(disabled.data.status).toBe("disabled");
    },
    scaled(240_000),
  );

  it(
    '"Teach the agent" continues the walkthrough: a PDF indexed and cited, the search, a source on a schedule',
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const page = "docs/knowledge.md";
      const [pdf] = shBlocks("From a PDF to a cited answer in five minutes", page);
      const [search] = shBlocks("Try a question: what the agent finds", page);
      const [schedule] = shBlocks("Re-sync on a schedule", page);
      const env = environment("knowledge", await freePort());
      const service = await startService(start!, env);
      const r = await runScript([script, pdf, search, schedule].join("\n"), env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      const values = jsonValues(r.stdout);
      const found = values.find((v) => v.data?.passages)!.data;
      expect(found.answers).toBe(true);
      expect(found.passages[0]).toMatchObject({ source_title: "Returns policy", knowledge_version: 1 });
      expect(found.passages[0].excerpt).toContain("5 business days");
      expect(r.stdout.trimEnd().split("\n").at(-1)).toMatch(/24$/);
    },
    scaled(240_000),
  );

  it(
    "the handover walkthrough continues the walkthrough: take over, reply, hand back, the agent answers again",
    async () => {
      const [start, script] = shBlocks("Walkthrough");
      const [handover, ...more] = shBlocks(
        "Walkthrough: from a contact to a human reply and back",
        "docs/conversations.md",
      );
      expect(more).toEqual([]);
      const env = environment("handover", await freePort());
      const service = await startService(start!, env);
      const r = await runScript(`${script}\n${handover}`, env);
      expect(r.code, `${r.stdout}\n${r.stderr}\n${service.output()}`).toBe(0);
      expect(r.stdout).not.toMatch(/"code":\s*"/);
      // Each step prints one field: the reply, the conversation found, the take-over, the reply's order, the release,
      // the role of the answer to the next message.
      const lines = r.stdout.trimEnd().split("\n").slice(-5);
      expect(lines).toEqual([
        expect.stringMatching(/^[0-9a-f-]{36}$/),
        "you@example.com",
        "5",
        "ai_agent",
        "assistant",
      ]);
    },
    scaled(240_000),
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
