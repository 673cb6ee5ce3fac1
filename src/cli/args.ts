import { parseArgs } from "node:util";

/** A command-line mistake: printed with usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** Every option any command understands; each command accepts only its own (COMMON_OPTIONS and its list). */
const OPTIONS = {
  db: { type: "string" },
  json: { type: "boolean" },
  email: { type: "string" },
  password: { type: "string" },
  name: { type: "string" },
  "allowed-origin": { type: "string", multiple: true },
  knowledge: { type: "string" },
  id: { type: "string" },
  all: { type: "boolean" },
  grace: { type: "string" },
  "chatbot-id": { type: "string" },
  "user-id": { type: "string" },
  "contact-id": { type: "string" },
  days: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The name of an option, without its dashes. */
export type OptionName = keyof typeof OPTIONS;

/** The options every command takes. */
export const COMMON_OPTIONS: readonly OptionName[] = ["db", "json", "help"];

export type ParsedArgs = ReturnType<typeof parse>;
export type Values = ParsedArgs["values"];

/** Parses argv strictly: an unknown option or a stray word is a UsageError naming it. */
export function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Refuses an option the command does not take (it would otherwise be silently ignored). */
export function onlyOptions(command: string, values: Values, allowed: readonly OptionName[]): void {
  for (const name of Object.keys(values) as OptionName[]) {
    if (!COMMON_OPTIONS.includes(name) && !allowed.includes(name))
      throw new UsageError(`--${name} is not an option of '${command}'`);
  }
}

/** A required option's value, or a UsageError naming it. */
export function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}
