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

for (const method of ["log", "info", "warn", "error", "debug", "trace"] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    guard(format(...args), `console.${method}`);
    original(...args);
  };
}
for (const stream of [process.stdout, process.stderr]) {
  const original = stream.write.bind(stream) as (...a: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    guard(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"), "the output");
    return original(chunk, ...rest);
  }) as typeof stream.write;
}
