import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The checkout's root. */
export const ROOT = resolve(import.meta.dirname, "../..");

/** The user's manual: README.md and every page under docs/, by path relative to the root. */
export function manualPages(): string[] {
  const pages = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  return ["README.md", ...pages.sort()];
}

/** One page of the manual. */
export function readPage(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The text of a page's "## heading" section, up to the next "## " heading. */
export function section(path: string, heading: string): string {
  const text = readPage(path);
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${path} has no section "## ${heading}"`);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of one language (e.g. "sh") in a section. */
export function blocks(path: string, heading: string, language = "sh"): string[] {
  const re = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g");
  return [...section(path, heading).matchAll(re)].map((m) => m[1]!);
}
