import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import mammoth from "mammoth";
import TurndownService from "turndown";
import type { ExtractedPage } from "../domain/knowledge/chunking.js";

// Reading documents into Markdown with well-kept libraries: unpdf (PDF.js) for PDF, mammoth for DOCX,
// @mozilla/readability over linkedom for a web page's main content, turndown for HTML to Markdown. It runs in a
// worker thread (worker-pool.ts) with a memory and time limit; the bounds here turn the usual bombs into a reason.

/** Most pages of a PDF read. */
export const MAX_PDF_PAGES = 1000;
/** Deepest element nesting of an HTML document read. */
export const MAX_HTML_DEPTH = 400;
/** Most elements of an HTML document read. */
export const MAX_HTML_ELEMENTS = 200_000;
/** Most characters of Markdown kept from one document. */
export const MAX_MARKDOWN_CHARS = 4_000_000;

/** A document to read: its bytes and what is known of its type. */
export interface ExtractJob {
  bytes: Uint8Array;
  /** A file's name (its extension), or "" for a fetched page. */
  fileName: string;
  /** The Content-Type a server sent, or "". */
  contentType: string;
  /** Where it came from; "" for a file (the domain gives it the source's address). */
  url: string;
}

/** What was read: the pages (one but for none), what the document was read as, and a page's links. */
export interface ExtractResult {
  mediaType: string;
  pages: ExtractedPage[];
  links: string[];
}

/** A document that cannot be read, with the reason a person can act on. */
export class ExtractFailure extends Error {
  override readonly name = "ExtractFailure";
}

const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** What a document is: by its first bytes, then the server's type, then its name. */
export function mediaTypeOf(job: ExtractJob): string {
  const b = job.bytes;
  const name = job.fileName.toLowerCase();
  const type = job.contentType.split(";")[0]!.trim().toLowerCase();
  if (b[0] === 0x25 && b[1] === 0x50 && b[2] === 0x44 && b[3] === 0x46) return "application/pdf";
  if (b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04) {
    if (name.endsWith(".docx") || type === DOCX || (!name && !type)) return DOCX;
    throw new ExtractFailure(
      "the file is a ZIP archive but not a Word document (.docx); upload Markdown, text, HTML, PDF or DOCX",
    );
  }
  if (type === "application/pdf" || name.endsWith(".pdf"))
    throw new ExtractFailure("the file is named or served as a PDF but does not start like one (%PDF)");
  if (name.endsWith(".docx") || type === DOCX)
    throw new ExtractFailure("the file is named or served as a Word document but is not one (no ZIP header)");
  if (name.endsWith(".doc") || type === "application/msword")
    throw new ExtractFailure("old Word documents (.doc) are not read; save it as .docx or PDF and upload that");
  const text = decodeText(b);
  if (type === "text/html" || type === "application/xhtml+xml" || /\.x?html?$/.test(name)) return "text/html";
  if (type === "text/markdown" || /\.(md|markdown)$/.test(name)) return "text/markdown";
  if (type === "text/plain" || name.endsWith(".txt")) return "text/plain";
  if (!name && !type && /^\s*(<!doctype html|<html|<head|<body)/i.test(text)) return "text/html";
  if (name || type)
    throw new ExtractFailure(
      `${name ? `the file type of ${job.fileName}` : `the content type ${type}`} is not read; upload Markdown, text, HTML, PDF or DOCX`,
    );
  return "text/plain";
}

function decodeText(b: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(b);
  } catch {
    throw new ExtractFailure("the text is not valid UTF-8; save it as UTF-8 and upload it again");
  }
}

/** Rough element nesting and count of an HTML text, before any parser sees it. */
function checkHtmlShape(html: string): void {
  const VOID = /^(area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr|p|li|td|tr|th|option)$/i;
  let depth = 0;
  let max = 0;
  let elements = 0;
  for (const m of html.matchAll(/<(\/?)([a-zA-Z][\w-]*)[^>]*?(\/?)>/g)) {
    const tag = m[2]!;
    if (VOID.test(tag)) {
      elements++;
      continue;
    }
    if (m[1]) depth = Math.max(0, depth - 1);
    else if (!m[3]) {
      elements++;
      depth++;
      if (depth > max) max = depth;
    }
    if (max > MAX_HTML_DEPTH)
      throw new ExtractFailure(`the HTML is nested more than ${MAX_HTML_DEPTH} elements deep; it is not read`);
    if (elements > MAX_HTML_ELEMENTS)
      throw new ExtractFailure(`the HTML has more than ${MAX_HTML_ELEMENTS} elements; split it into smaller pages`);
  }
}

const ANCHOR_MARK = "\u2063ANCHOR\u2063";

function turndown(): TurndownService {
  const t = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  t.remove(["script", "style", "noscript", "iframe", "object", "embed", "svg", "canvas", "form", "nav"] as never);
  return t;
}

/** HTML into Markdown, keeping each heading's id as an explicit anchor ("Heading {#id}") for citations. */
function htmlToMarkdown(html: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const ids: string[] = [];
  for (const h of document.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const id =
      h.getAttribute("id") ||
      h.querySelector("[id], a[name]")?.getAttribute("id") ||
      h.querySelector("a[name]")?.getAttribute("name");
    if (id && /^[\w.:-]{1,200}$/.test(id)) {
      h.appendChild(document.createTextNode(` ${ANCHOR_MARK}${ids.length}`));
      ids.push(id);
    }
  }
  const md = turndown().turndown(document.body as never);
  return md.replace(new RegExp(`\\s*${ANCHOR_MARK}(\\d+)`, "g"), (_, i: string) => ` {#${ids[Number(i)]}}`);
}

/** The least share of a page's text Readability's main content must hold to be read instead of the whole body. */
const MAIN_SHARE = 0.6;

/** A web page's title, main content (Readability; the whole body when it finds none) and links. */
function readHtml(html: string, url: string): { title: string; markdown: string; links: string[] } {
  checkHtmlShape(html);
  const { document } = parseHTML(html);
  const links: string[] = [];
  for (const a of document.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href") ?? "";
    try {
      if (url) links.push(new URL(href, url).toString());
    } catch {
      // not a URL: not followed
    }
  }
  const pageTitle = (document.querySelector("title")?.textContent ?? "").trim();
  const h1 = (document.querySelector("h1")?.textContent ?? "").trim();
  const body = document.body?.innerHTML ?? html;
  const bodyChars = (document.body?.textContent ?? "").replace(/\s+/g, " ").length;
  let article: { title?: string | null; content?: string | null; textContent?: string | null } | null = null;
  try {
    article = new Readability(document as never, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  // Readability keeps one block and drops its siblings: right for an article among boilerplate, wrong for a manual
  // page whose sections are siblings. When it keeps less than MAIN_SHARE of the page's text, the whole body is read.
  const kept = (article?.textContent ?? "").replace(/\s+/g, " ").length;
  const content =
    article?.content && article.content.length > 200 && kept >= MAIN_SHARE * bodyChars ? article.content : body;
  return {
    title: (pageTitle || article?.title || h1 || "").replace(/\s+/g, " ").slice(0, 256),
    markdown: htmlToMarkdown(content),
    links,
  };
}

async function readPdf(bytes: Uint8Array): Promise<{ title: string; markdown: string }> {
  const { getDocumentProxy } = await import("unpdf");
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false } as never);
  } catch (e) {
    throw new ExtractFailure(`the PDF cannot be read (${(e as Error).message}); is it damaged or password-protected?`);
  }
  if (pdf.numPages > MAX_PDF_PAGES)
    throw new ExtractFailure(`the PDF has ${pdf.numPages} pages; at most ${MAX_PDF_PAGES} are read: split it`);
  let title = "";
  try {
    const meta = await pdf.getMetadata();
    title = String((meta.info as Record<string, unknown> | undefined)?.Title ?? "").trim();
  } catch {
    // no metadata: the file's name stays the title
  }
  const parts: string[] = [];
  let chars = 0;
  for (let i = 1; i <= pdf.numPages; i++) {
    const page = await pdf.getPage(i);
    const content = await page.getTextContent();
    let text = "";
    for (const item of content.items as { str?: string; hasEOL?: boolean }[]) {
      text += item.str ?? "";
      if (item.hasEOL) text += "\n";
    }
    page.cleanup();
    // Lines of a paragraph rejoined; a blank line (or a short line) ends one.
    const body = text
      .replace(/[ \t]+\n/g, "\n")
      .replace(/([^\n.:!?])\n(?=[a-zà-ÿ])/g, "$1 ")
      .trim();
    if (body) parts.push(`# Page ${i} {#page=${i}}\n\n${body}`);
    chars += body.length;
    if (chars > MAX_MARKDOWN_CHARS)
      throw new ExtractFailure(`the PDF holds more than ${MAX_MARKDOWN_CHARS} characters of text; split it`);
  }
  await pdf.destroy();
  return { title, markdown: parts.join("\n\n") };
}

/** Most bytes a DOCX's entries may unpack to, as its ZIP directory declares them. */
export const MAX_DOCX_UNPACKED = 100 * 1024 * 1024;

/**
 * What a ZIP's central directory says its entries unpack to (a ZIP bomb declares a huge size or an absurd ratio;
 * one that lies about it is stopped by the worker's memory limit).
 */
function zipUnpackedSize(b: Uint8Array): number {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let end = -1;
  for (let i = b.length - 22; i >= Math.max(0, b.length - 65_557); i--)
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i;
      break;
    }
  if (end < 0) throw new ExtractFailure("the Word document is not a valid ZIP archive");
  const entries = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  let total = 0;
  for (let n = 0; n < entries; n++) {
    if (at + 46 > b.length || view.getUint32(at, true) !== 0x02014b50)
      throw new ExtractFailure("the Word document's ZIP directory is damaged");
    total += view.getUint32(at + 24, true);
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return total;
}

async function readDocx(bytes: Uint8Array): Promise<{ title: string; markdown: string }> {
  const unpacked = zipUnpackedSize(bytes);
  if (unpacked > MAX_DOCX_UNPACKED)
    throw new ExtractFailure(
      `the Word document unpacks to ${Math.round(unpacked / 1024 / 1024)} MB (at most ${MAX_DOCX_UNPACKED / 1024 / 1024} MB are read); is it a ZIP bomb?`,
    );
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value;
  } catch (e) {
    throw new ExtractFailure(`the Word document cannot be read (${(e as Error).message})`);
  }
  checkHtmlShape(html);
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  const title = (document.querySelector("h1")?.textContent ?? "").trim().slice(0, 256);
  return { title, markdown: htmlToMarkdown(html) };
}

/** Reads one document into Markdown pages. */
export async function extract(job: ExtractJob): Promise<ExtractResult> {
  const mediaType = mediaTypeOf(job);
  let r: { title: string; markdown: string; links?: string[] };
  if (mediaType === "application/pdf") r = await readPdf(job.bytes);
  else if (mediaType === DOCX) r = await readDocx(job.bytes);
  else {
    const text = decodeText(job.bytes);
    if (mediaType === "text/html") r = readHtml(text, job.url);
    else {
      const h1 = /^#\s+(.+)$/m.exec(text);
      r = { title: mediaType === "text/markdown" && h1 ? h1[1]!.trim().slice(0, 256) : "", markdown: text };
    }
  }
  const markdown = r.markdown.slice(0, MAX_MARKDOWN_CHARS);
  return { mediaType, pages: [{ url: job.url, title: r.title, markdown }], links: r.links ?? [] };
}
