import { fileTypeFromBuffer } from "file-type";
import sharp from "sharp";
import type { InspectedFile } from "../domain/conversation/attachments.js";
import { invalidArgument } from "../domain/errors.js";

/** What a file may be; anything else is refused. */
export const ACCEPTED = "an image (JPEG, PNG, WebP or GIF), a PDF or plain text";

type ImageType = "image/jpeg" | "image/png" | "image/webp" | "image/gif";
const IMAGES = new Set<string>(["image/jpeg", "image/png", "image/webp", "image/gif"]);

/**
 * A decoded image of more pixels than this is refused before it is decoded (a "decompression bomb": a few kB of PNG
 * that would take gigabytes of memory). 50 million pixels: a 8660 × 5773 photo.
 */
const MAX_PIXELS = 50_000_000;

// Re-encoding is CPU work in libvips' own threads: one image at a time per instance is plenty for a chat's uploads and
// leaves the event loop's thread pool to the rest.
sharp.concurrency(1);

/**
 * Tells the file's type by its content (file-type reads the magic bytes and the container's structure; the name and
 * the declared type are never asked), and makes it safe to keep:
 * - an image is decoded and encoded again in its own format: only its pixels survive, so its metadata (EXIF with GPS,
 *   XMP, IPTC, comments) and anything appended to it (a second file of a polyglot: HTML, a script, a ZIP) are gone;
 *   its EXIF orientation is applied first, so it shows the right way up;
 * - a PDF is kept as it is (it is only ever served as a download, in a sandbox);
 * - plain text must be UTF-8 without NUL characters (what file-type tells no type of).
 */
export async function inspectFile(bytes: Uint8Array): Promise<InspectedFile> {
  const type = await fileTypeFromBuffer(bytes);
  if (type && IMAGES.has(type.mime)) return reencoded(bytes, type.mime as ImageType);
  if (type?.mime === "application/pdf") return { contentType: "application/pdf", bytes, width: 0, height: 0 };
  const text = type === undefined && plainText(bytes);
  if (text && !MARKUP.test(text)) return { contentType: "text/plain; charset=utf-8", bytes, width: 0, height: 0 };
  throw invalidArgument(
    "file",
    `must be ${ACCEPTED}, told by its content: this is ${
      type ? `${type.mime} (.${type.ext})` : text ? "markup (HTML, SVG or XML), not plain text" : "not one of them"
    }`,
  );
}

async function reencoded(bytes: Uint8Array, mime: ImageType): Promise<InspectedFile> {
  const animated = mime === "image/gif" || mime === "image/webp";
  try {
    const img = sharp(bytes, { animated, limitInputPixels: MAX_PIXELS, failOn: "error" }).rotate();
    const out =
      mime === "image/jpeg"
        ? img.jpeg({ quality: 90, mozjpeg: true })
        : mime === "image/png"
          ? img.png()
          : mime === "image/webp"
            ? img.webp({ quality: 90 })
            : img.gif();
    // sharp keeps no metadata unless asked (withMetadata/keepExif): none is asked for.
    const { data, info } = await out.toBuffer({ resolveWithObject: true });
    const height = (info as { pageHeight?: number }).pageHeight ?? info.height;
    return { contentType: mime, bytes: new Uint8Array(data), width: info.width, height };
  } catch (e) {
    throw invalidArgument("file", `is not a readable ${mime.slice(6).toUpperCase()} image (${(e as Error).message})`);
  }
}

/**
 * Text that starts as a page, an image or a document of markup does: served as plain text with nosniff it could run
 * nothing, but a browser or a mail client that sniffs would render it, so it is refused (send it as a PDF, or zipped
 * elsewhere).
 */
const MARKUP = /^\s*<(?:[!?]|[a-z][\w:-]*[\s/>])/i;

/** The text, when the bytes are UTF-8 without NUL characters; undefined otherwise. */
function plainText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
