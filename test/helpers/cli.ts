import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { aiagentCommand } from "./command.js";
import { scaled } from "./time-scale.js";

const run = promisify(execFile);

/** What one run of the command did. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `aiagent` command from source in a child process (environment: the test's, plus `env`). */
export async function aiagent(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  try {
    const r = await run(process.execPath, [...aiagentCommand(), ...args], {
      env: { ...process.env, AIAGENT_DB: "", ...env },
      timeout: scaled(30_000),
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** Runs the command with --json, expects success and returns its one JSON object. */
export async function aiagentJson<T = Record<string, unknown>>(
  args: string[],
  env: Record<string, string> = {},
): Promise<T> {
  const r = await aiagent([...args, "--json"], env);
  if (r.code !== 0) throw new Error(`aiagent ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
