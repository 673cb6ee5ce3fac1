import { type ChildProcess, spawn } from "node:child_process";
import { scaled } from "../helpers/time-scale.js";

/** A server of examples/ run as its own process, as the README runs it. */
export interface ExampleProcess {
  url: string;
  /** What it wrote to stderr (request logs, errors). */
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts `command args…` and waits for the address it prints on its first line of output. */
export function startExample(command: string, args: string[], env: Record<string, string>): Promise<ExampleProcess> {
  const child: ChildProcess = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${args.join(" ")} did not start in 20 s: ${err}`));
    }, scaled(20_000));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited with ${code}: ${err}`));
    });
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const url = /^(http:\/\/\S+)\n/.exec(out)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      resolve({ url, stderr: () => err, stop });
    });
  });
}
