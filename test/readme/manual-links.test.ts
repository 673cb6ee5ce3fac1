import { existsSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { manualPages, ROOT, readPage } from "../helpers/docs.js";

// The manual is README.md and docs/*.md: a short front door and one page per question. A reader must never follow a
// link to nothing, and every page must be one click from the README.

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens (repeats get -1, -2…). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, "");
  for (const m of withoutCode.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The link targets of a page (inline links and images), code blocks and code spans left out. */
function links(markdown: string): string[] {
  const text = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

describe("the manual", () => {
  it("has a front door of at most 250 lines", () => {
    expect(readPage("README.md").split("\n").length).toBeLessThanOrEqual(250);
  });

  it.each(manualPages())("%s: every link reaches a file (and its heading) inside the repository", (page) => {
    const text = readPage(page);
    for (const target of links(text)) {
      if (/^(https?|mailto):/.test(target)) continue;
      const [path, anchor] = target.split("#") as [string, string | undefined];
      const file = path === "" ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
      expect(relative(ROOT, file).startsWith(".."), `${page} links outside the repository: ${target}`).toBe(false);
      expect(existsSync(file), `${page} links to a missing file: ${target}`).toBe(true);
      if (anchor !== undefined && file.endsWith(".md") && statSync(file).isFile()) {
        const other = readPage(relative(ROOT, file));
        expect(anchors(other).has(anchor), `${page} links to a missing heading: ${target}`).toBe(true);
      }
    }
  });

  it("never cites the developers' notes, which no user of the repository has", () => {
    for (const page of manualPages()) expect(readPage(page), page).not.toMatch(/shared\/(notes|spec)/);
  });

  it("links every page of docs/ from the README, so each is one click away", () => {
    const fromReadme = new Set(links(readPage("README.md")).map((l) => l.split("#")[0]));
    for (const page of manualPages().slice(1))
      expect(fromReadme, `${page} is not linked from the README`).toContain(page);
  });
});
