import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { blocks, ROOT } from "../helpers/docs.js";
import { type Ended, runToEnd } from "../helpers/run-to-end.js";
import { scaled } from "../helpers/time-scale.js";

// The manual's own commands, read from README.md and docs/ and run as written (bash, from the checkout) against a
// service started as the README starts it (readme-commands.test.ts and readme-command-lines.test.ts, which run in
// parallel). Only the environment is the test's: a database of its own (AIAGENT_DB) and a free port.

/** The ```sh blocks of the section with this heading, in README.md or a page of docs/. */
export function shBlocks(heading: string, page = "README.md"): string[] {
  return blocks(page, heading);
}

/** A folder for the file's databases, and the services it starts: all removed and stopped after the file. */
export function manualRun(): {
  environment(name: string, port: number): NodeJS.ProcessEnv;
  startService(command: string, env: NodeJS.ProcessEnv): Promise<{ output: () => string }>;
} {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-readme-"));
  const started = new Set<ChildProcess>();
  afterAll(() => {
    for (const p of started) if (p.pid) process.kill(-p.pid, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    environment(name, port) {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        AIAGENT_DB: join(dir, `${name}.db`),
        AIAGENT_PORT: String(port),
        AIAGENT_LOG_LEVEL: "warn",
      };
      delete env.NODE_ENV; // as in a newcomer's shell: not production, so the demo bootstrap runs
      return env;
    },
    /** Starts a README command that serves, in its own process group, and waits until the service answers /readyz. */
    async startService(command, env) {
      const proc = spawn("bash", ["-c", command], {
        cwd: ROOT,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      started.add(proc);
      let output = "";
      proc.stdout!.on("data", (d: Buffer) => (output += d.toString()));
      proc.stderr!.on("data", (d: Buffer) => (output += d.toString()));
      let exited = false;
      proc.on("exit", () => (exited = true));
      const url = `http://127.0.0.1:${env.AIAGENT_PORT}/readyz`;
      const end = Date.now() + scaled(120_000);
      while (Date.now() < end) {
        if (exited) throw new Error(`"${command}" exited: ${output}`);
        if ((await fetch(url).catch(() => undefined))?.status === 200) return { output: () => output };
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`"${command}" did not serve within ${scaled(120_000)} ms: ${output}`);
    },
  };
}

/** Runs README lines in one bash, stopping at the first failing command (killed after two minutes, scaled). */
export function runScript(script: string, env: NodeJS.ProcessEnv): Promise<Ended> {
  return runToEnd("bash", ["-c", `set -euo pipefail\n${script}`], { cwd: ROOT, env, killAfterMs: scaled(120_000) });
}

/** The top-level JSON objects in a text, in order (braces inside strings are skipped). */
export function jsonValues(text: string): any[] {
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
