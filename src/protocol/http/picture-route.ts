import { createHash } from "node:crypto";
import type { ChatbotPictures } from "../../domain/account/chatbot-picture.js";
import type { OperatorPictures, StoredPicture } from "../../domain/account/operator-picture.js";
import { DomainError } from "../../domain/errors.js";
import type { PageRequest, PageRoute } from "./pages.js";
import { type HttpResponse, pathOf, sendJson } from "./types.js";

/**
 * GET /v1/operator_pictures/{id}: a person's uploaded picture, as the customer's frame shows it. The type is the
 * one its magic bytes were checked against at upload, never sniffed, and the answer can run nothing (its own CSP).
 */
export function pictureRoute(pictures: OperatorPictures): PageRoute {
  // Checked again on each use: a picture replaced or removed (the member removed) shows at once.
  return servedPictures("operator pictures", "/v1/operator_pictures/", (id) => pictures.get(id), "no-cache");
}

/**
 * GET /v1/chatbot_pictures/{id}: a chatbot's agent picture, served like the people's. Its id changes with its bytes,
 * so a browser may keep it: a replaced or removed picture is simply no longer named by the frame.
 */
export function chatbotPictureRoute(pictures: ChatbotPictures): PageRoute {
  return servedPictures(
    "chatbot pictures",
    "/v1/chatbot_pictures/",
    (id) => pictures.get(id),
    "public, max-age=31536000, immutable",
  );
}

function servedPictures(
  name: string,
  prefix: string,
  get: (id: string) => Promise<StoredPicture>,
  cacheControl: string,
): PageRoute {
  return {
    name,
    verbs: ["GET", "HEAD"],
    path: new RegExp(`^${prefix}[^/]+$`),
    serve: (req, res) => serve(get, pathOf(req).slice(prefix.length), cacheControl, req, res),
  };
}

async function serve(
  get: (id: string) => Promise<StoredPicture>,
  id: string,
  cacheControl: string,
  req: PageRequest,
  res: HttpResponse,
): Promise<void> {
  let p: StoredPicture;
  try {
    p = await get(id);
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
    "cache-control": cacheControl,
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
