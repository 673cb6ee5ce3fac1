import { parseArgs } from "node:util";

/** A command-line mistake: printed with usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The options every command understands, and each command's own. */
const OPTIONS = {
  db: { type: "string" },
  json: { type: "boolean" },
  email: { type: "string" },
  password: { type: "string" },
  name: { type: "string" },
  "allowed-origin": { type: "string", multiple: true },
  knowledge: { type: "string" },
  id: { type: "string" },
  "chatbot-id": { type: "string" },
  "user-id": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  contacts: { type: "string" },
  messages: { type: "string" },
  conversations: { type: "string" },
  scale: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export type ParsedArgs = ReturnType<typeof parse>;

/** Parses argv strictly: an unknown option or a stray word is a UsageError naming it. */
export function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** A required option's value, or a UsageError naming it. */
export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}
