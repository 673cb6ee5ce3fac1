/**
 * Variables in saved replies, as Chatwoot's: `{{contact.name}}`, `{{contact.email}}`, `{{operator.name}}` and
 * `{{chatbot.name}}`, filled in when a saved reply is inserted in the reply box. A fallback for an empty value may
 * follow a bar, as Intercom's: `{{contact.name | fallback: "there"}}`. A variable with no value and no fallback, and
 * an unknown one, are left as written, for the person to see and fix before sending.
 */

/** The variables a saved reply may hold. */
export const REPLY_VARIABLES = ["contact.name", "contact.email", "operator.name", "chatbot.name"] as const;
export type ReplyVariable = (typeof REPLY_VARIABLES)[number];

/** `{{ name }}` or `{{ name | fallback: "text" }}` (the quotes optional); no braces inside. */
const VARIABLE = /\{\{\s*([^{}|]*?)\s*(?:\|\s*fallback\s*:\s*(?:"([^"{}]*)"|'([^'{}]*)'|([^{}]*?))\s*)?\}\}/g;

const isKnown = (name: string): name is ReplyVariable => (REPLY_VARIABLES as readonly string[]).includes(name);

/** The unknown variables a text holds (as written, without braces), each once, in order. */
export function unknownVariables(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(VARIABLE)) if (!isKnown(m[1]!)) seen.add(m[1]!);
  return [...seen];
}

/** What filling a saved reply gave: its text, and the variables left as written for want of a value. */
export interface Filled {
  text: string;
  /** Known variables with an empty value and no fallback: left as written, for the person to replace. */
  empty: ReplyVariable[];
  /** Variables this service does not know: left as written. */
  unknown: string[];
}

/** Fills a saved reply's variables from `values` (a blank value counts as empty). */
export function fillVariables(text: string, values: Partial<Record<ReplyVariable, string>>): Filled {
  const empty = new Set<ReplyVariable>();
  const unknown = new Set<string>();
  const filled = text.replace(VARIABLE, (whole, name: string, dq?: string, sq?: string, bare?: string) => {
    if (!isKnown(name)) {
      unknown.add(name);
      return whole;
    }
    const value = (values[name] ?? "").trim();
    if (value !== "") return value;
    const fallback = dq ?? sq ?? bare;
    if (fallback !== undefined && fallback.trim() !== "") return fallback.trim();
    empty.add(name);
    return whole;
  });
  return { text: filled, empty: [...empty], unknown: [...unknown] };
}
