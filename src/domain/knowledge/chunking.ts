import { detectLanguage, type TextLanguage } from "./language.js";
import type { ChunkInput } from "./source.js";

/** A document read into Markdown: a page of a site, a file, or one snippet. */
export interface ExtractedPage {
  /** Its address (a file's is the source's own `knowledge:` address). */
  url: string;
  title: string;
  markdown: string;
}

/** Longest passage indexed, in characters: long enough for a paragraph or a small table, short enough to cite. */
export const MAX_CHUNK_CHARS = 1500;
/** Passages shorter than this are joined with the next block of the same section. */
const MIN_CHUNK_CHARS = 300;
/** The most passages one page gives (a page past it is cut, and the rest is not indexed). */
export const MAX_CHUNKS_PER_PAGE = 2000;

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
/** An explicit anchor an extractor kept from the document (an HTML heading's id): "Title {#id}". */
const ANCHOR = /\s*\{#([^\s}]+)\}\s*$/;

/** A heading's anchor as GitHub and most documentation generators make it. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .trim()
    .replace(/\s+/g, "-");
}

/** Splits text on blank lines into blocks, keeping a fenced code block whole. */
function blocks(text: string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (!fenced && line.trim() === "") {
      if (cur.length) out.push(cur.join("\n"));
      cur = [];
    } else cur.push(line);
  }
  if (cur.length) out.push(cur.join("\n"));
  return out;
}

/** A block too long for one passage, cut at line ends, then at sentence ends, then hard. */
function split(block: string): string[] {
  if (block.length <= MAX_CHUNK_CHARS) return [block];
  const parts = block.includes("\n") ? block.split("\n") : block.split(/(?<=[.!?])\s+/);
  const out: string[] = [];
  let cur = "";
  for (const p of parts) {
    if (p.length > MAX_CHUNK_CHARS) {
      if (cur) out.push(cur);
      cur = "";
      for (let i = 0; i < p.length; i += MAX_CHUNK_CHARS) out.push(p.slice(i, i + MAX_CHUNK_CHARS));
      continue;
    }
    if (cur && cur.length + p.length + 1 > MAX_CHUNK_CHARS) {
      out.push(cur);
      cur = p;
    } else cur = cur ? `${cur}${block.includes("\n") ? "\n" : " "}${p}` : p;
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * A page's passages, following its structure: a passage never spans two sections; within a section paragraphs,
 * lists, tables and code blocks are kept whole where they fit, and small ones are joined. Each passage keeps its
 * heading path and the page's address with the anchor of its nearest heading.
 */
export function chunkPage(page: ExtractedPage, language?: TextLanguage): ChunkInput[] {
  const lang = language ?? detectLanguage(page.markdown);
  const base = page.url.split("#")[0]!;
  const path: string[] = [];
  let anchor = "";
  const out: ChunkInput[] = [];
  let section: string[] = [];
  const flush = () => {
    let cur = "";
    const emit = (t: string) => {
      if (t.trim() && out.length < MAX_CHUNKS_PER_PAGE)
        out.push({
          title: page.title,
          anchorUrl: anchor ? `${base}#${anchor}` : base,
          headingPath: path.filter(Boolean).join(" > "),
          text: t.trim(),
          language: lang,
          position: out.length,
        });
    };
    for (const b of section.flatMap(split)) {
      if (cur && cur.length + b.length + 2 > MAX_CHUNK_CHARS) {
        emit(cur);
        cur = b;
      } else cur = cur ? `${cur}\n\n${b}` : b;
      if (cur.length >= MIN_CHUNK_CHARS) {
        emit(cur);
        cur = "";
      }
    }
    emit(cur);
    section = [];
  };
  for (const block of blocks(page.markdown)) {
    const h = HEADING.exec(block.split("\n")[0]!);
    if (h && !block.includes("\n")) {
      flush();
      const level = h[1]!.length;
      const m = ANCHOR.exec(h[2]!);
      const title = h[2]!.replace(ANCHOR, "").trim();
      path.length = level - 1;
      path[level - 1] = title;
      anchor = m ? m[1]! : slug(title);
      continue;
    }
    section.push(block.replace(ANCHOR, ""));
  }
  flush();
  return out;
}
