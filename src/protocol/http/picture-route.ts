import { createHash } from "node:crypto";
import type { OperatorPictures } from "../../domain/account/operator-picture.js";
import { DomainError } from "../../domain/errors.js";
import type { PageRequest, PageRoute } from "./pages.js";
import { type HttpResponse, pathOf, sendJson } from "./types.js";

const PREFIX = "/v1/operator_pictures/";

/**
 * GET /v1/operator_pictures/{id}: a person's uploaded picture, as the customer's frame shows it. The type is the
 * one its magic bytes were checked against at upload, never sniffed, and the answer can run nothing (its own CSP).
 */
export function pictureRoute(pictures: OperatorPictures): PageRoute {
  return {
    name: "operator pictures",
    verbs: ["GET", "HEAD"],
    path: /^\/v1\/operator_pictures\/[^/]+$/,
    serve: (req, res) => serve(pictures, pathOf(req).slice(PREFIX.length), req, res),
  };
}

async function serve(pictures: OperatorPictures, id: string, req: PageRequest, res: HttpResponse): Promise<void> {
  let p: Awaited<ReturnType<OperatorPictures["get"]>>;
  try {
    p = await pictures.get(id);
  } catch (e) {
    if (e instanceof DomainError && e.kind === "not_found")
      return sendJson(res, 404, { code: "not_found", message: "picture not found", details: [] }, NOT_STORED);
    throw e;
  }
  const etag = `"${createHash("sha256").update(p.bytes).digest("base64url").slice(0, 22)}"`;
  const headers = {
    "content-type": p.contentType,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    // The frame may be served from another origin than the API it reads (its own CSP names this one).
    "cross-origin-resource-policy": "cross-origin",
    // Checked again on each use: a picture replaced or removed (the member removed) shows at once.
    "cache-control": "no-cache",
    etag,
  };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "content-length": String(p.bytes.length) });
  if (req.method === "HEAD") res.end();
  else res.end(Buffer.from(p.bytes));
}

const NOT_STORED = { "cache-control": "no-store", "x-content-type-options": "nosniff" };
