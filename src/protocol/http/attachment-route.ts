import { createHash } from "node:crypto";
import type { Attachments } from "../../domain/conversation/attachments.js";
import type { StoredFile } from "../../domain/conversation/repository.js";
import { DomainError } from "../../domain/errors.js";
import type { PageRoute } from "./pages.js";
import { pathOf, sendJson } from "./types.js";

const PREFIX = "/v1/attachments/";

/**
 * GET /v1/attachments/{id}: a file sent with a message. Its id is 128 random bits and is told only to those who read
 * the conversation (the message's `attachments[].url`): the address is the permission, as a signed blob address is
 * Chatwoot's (docs/attachments.md). What it answers can run nothing: its type is the one told by its content at
 * upload, never sniffed (nosniff), a sandbox with no sources (its CSP), and anything but an image is a download.
 */
export function attachmentRoute(attachments: Pick<Attachments, "file">): PageRoute {
  return {
    name: "attachments",
    verbs: ["GET", "HEAD"],
    path: new RegExp(`^${PREFIX}[^/]+$`),
    serve: async (req, res) => {
      let f: StoredFile;
      try {
        f = await attachments.file(pathOf(req).slice(PREFIX.length));
      } catch (e) {
        if (e instanceof DomainError && e.kind === "not_found")
          return sendJson(
            res,
            404,
            { code: "not_found", message: "attachment not found", details: [] },
            { "cache-control": "no-store", "x-content-type-options": "nosniff" },
          );
        throw e;
      }
      const etag = `"${createHash("sha256").update(f.bytes).digest("base64url").slice(0, 22)}"`;
      const headers = {
        "content-type": f.contentType,
        "content-disposition": contentDisposition(f),
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        // The frame may be served from another origin than the API it reads (its own CSP names this one).
        "cross-origin-resource-policy": "cross-origin",
        // Private: a shared cache must not keep a customer's file; erased, it is gone at the next request.
        "cache-control": "private, no-cache",
        "referrer-policy": "no-referrer",
        etag,
      };
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, "content-length": String(f.bytes.length) });
      if (req.method === "HEAD") res.end();
      else res.end(Buffer.from(f.bytes));
    },
  };
}

/**
 * An image is shown where it is linked (inline); anything else is saved, never opened in the service's origin. The
 * name goes as RFC 6266 says: an ASCII fallback (quotes, backslashes and non-ASCII replaced) and the UTF-8 name.
 */
export function contentDisposition(f: Pick<StoredFile, "name" | "contentType">): string {
  const kind = f.contentType.startsWith("image/") ? "inline" : "attachment";
  const ascii = f.name.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(f.name)}`;
}
