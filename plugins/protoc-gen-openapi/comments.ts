import type { AnyDesc, DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";

/** The leading comment of an element as prose: lint directives dropped, wrapped lines joined, paragraphs kept. */
export function commentOf(desc: Exclude<AnyDesc, DescFile>): string {
  const raw = getComments(desc).leading ?? "";
  const lines = raw
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => !/^buf:lint:/.test(l));
  return lines
    .join("\n")
    .split(/\n{2,}/)
    .map((p) => p.replace(/\n/g, " ").trim())
    .filter((p) => p !== "")
    .join("\n\n");
}

/** The first sentence of a comment, for an operation's summary. */
export function firstSentence(text: string): string {
  const m = /^(.+?[.:])(\s|$)/s.exec(text);
  return (m ? m[1]! : text).replace(/[.:]$/, "");
}

/** What a field's comment states in words that a machine can also use. */
export interface CommentFacts {
  minimum?: number;
  maximum?: number;
  default?: string | number;
  enum?: string[];
  format?: "uuid" | "date-time";
  /** The comment says the field may be left out or empty ("optional", "when absent", "alternatively"…). */
  optional: boolean;
  /** The comment says the value may be absent from a response. */
  mayBeAbsent: boolean;
}

/**
 * Reads the conventions the contract's comments follow: "1 to 100", "0 or more", "10 when absent",
 * "One of all (the default), unread, live", "a uuid", "ISO 8601", "Optional", "empty when/to".
 */
export function factsOf(text: string, numeric: boolean): CommentFacts {
  const facts: CommentFacts = { optional: false, mayBeAbsent: false };
  if (numeric) {
    const range = /\b(-?\d+) to (-?\d+)\b/.exec(text);
    if (range) {
      facts.minimum = Number(range[1]);
      facts.maximum = Number(range[2]);
    }
    const atLeast = /\b(-?\d+) or more\b/.exec(text);
    if (atLeast) facts.minimum = Number(atLeast[1]);
  }
  const whenAbsent = /(?:^|[;,.]\s*)(\S+) when absent\b/.exec(text);
  if (whenAbsent) facts.default = numeric ? Number(whenAbsent[1]) : whenAbsent[1]!;
  const oneOf = /\bOne of ([^.;]+)/.exec(text);
  if (oneOf) {
    const items = oneOf[1]!
      .split(/,\s*|\s+or\s+/)
      .map((s) => s.trim())
      .filter((s) => s !== "");
    facts.enum = items.map((s) => s.replace(/\s*\(the default\)$/, ""));
    const def = items.find((s) => s.endsWith("(the default)"));
    if (def) facts.default = def.replace(/\s*\(the default\)$/, "");
  }
  const mayBeEmpty = /\bempty (when|to)\b/i.test(text);
  if (/\ba uuid\b/i.test(text) && !mayBeEmpty) facts.format = "uuid";
  if (/\bISO 8601\b/.test(text) && !mayBeEmpty) facts.format = "date-time";
  facts.optional = /\boptional\b|\bwhen (empty|absent)\b|\bempty to\b|\balternatively\b|\(the default\)/i.test(text);
  facts.mayBeAbsent = /\babsent\b/i.test(text);
  return facts;
}
