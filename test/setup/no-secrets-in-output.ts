import { format } from "node:util";
import { findSecretShape } from "../helpers/secret-shapes.js";

// Nothing secret may reach a log, the test runner's output included: a test that prints a credential-shaped
// string (to the console or straight to stdout/stderr) fails at that line instead, and the string is not printed.
class SecretInOutputError extends Error {
  override readonly name = "SecretInOutputError";
}

function guard(text: string, where: string): void {
  const found = findSecretShape(text);
  if (found) throw new SecretInOutputError(`a test wrote a credential (${found.slice(0, 6)}…) to ${where}`);
}

// Once per console and stream: a worker that runs several files one after another (vitest.config.ts) runs this file
// again for each, and a second wrapper would only check every line twice.
const WRAPPED = Symbol.for("aiagent.test.no-secrets-in-output");
type Marked = { [WRAPPED]?: true };

for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
  if ((console[method] as Marked)[WRAPPED]) continue;
  const original = console[method].bind(console);
  const guarded = (...args: unknown[]) => {
    guard(format(...args), `console.${method}`);
    original(...args);
  };
  console[method] = Object.assign(guarded, { [WRAPPED]: true as const });
}
for (const stream of [process.stdout, process.stderr]) {
  if ((stream.write as Marked)[WRAPPED]) continue;
  const original = stream.write.bind(stream) as (...a: unknown[]) => boolean;
  const guarded = (chunk: unknown, ...rest: unknown[]) => {
    guard(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"), "the output");
    return original(chunk, ...rest);
  };
  stream.write = Object.assign(guarded, { [WRAPPED]: true as const }) as typeof stream.write;
}
