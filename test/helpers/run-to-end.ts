import { type SpawnOptions, spawn } from "node:child_process";

/** What a child process printed, and how it ended (code null: killed). */
export interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, keeping what it prints; SIGKILL after `killAfterMs` (the caller scales it). */
export function runToEnd(command: string, args: string[], o: SpawnOptions & { killAfterMs: number }): Promise<Ended> {
  const { killAfterMs, ...options } = o;
  return new Promise((done) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
