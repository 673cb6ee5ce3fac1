import { createHash } from "node:crypto";
import type { PageRoute } from "./pages.js";
import type { HttpResponse } from "./types.js";

// The ETags of the bodies served lately: a bundle changes only when it is rebuilt, so each is hashed once.
const etags = new Map<string, string>();

/** A strong ETag of a body (a truncated SHA-256), computed once per body. */
export function etagOf(body: string): string {
  let tag = etags.get(body);
  if (tag === undefined) {
    tag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    if (etags.size >= 16) etags.clear();
    etags.set(body, tag);
  }
  return tag;
}

/**
 * A script or stylesheet of the service's pages: revalidated on every use (assets have no versioned names),
 * answered 304 when unchanged.
 */
export function sendAsset(
  req: { readonly method?: string | undefined; readonly headers: { readonly [name: string]: unknown } },
  res: HttpResponse,
  type: string,
  body: string,
): void {
  const etag = etagOf(body);
  const headers = { "content-type": type, "cache-control": "no-cache", etag, "x-content-type-options": "nosniff" };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "content-length": String(Buffer.byteLength(body)) });
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

/**
 * The pages of a stylesheet and a bundled script under `dir` (named `<stem>.css`, `<stem>.js`); a script that cannot
 * be built is a 500 saying which build to run, and a line in the log.
 */
export function assetPages(
  stem: string,
  dir: string,
  css: string,
  script: () => Promise<string>,
  failed: (e: Error) => string,
): PageRoute[] {
  return [
    {
      name: `${stem} stylesheet`,
      verbs: ["GET", "HEAD"],
      path: `${dir}${stem}.css`,
      serve: (req, res) => sendAsset(req, res, "text/css; charset=utf-8", css),
    },
    {
      name: `${stem} script`,
      verbs: ["GET", "HEAD"],
      path: `${dir}${stem}.js`,
      serve: (req, res) =>
        script().then(
          (js) => sendAsset(req, res, "text/javascript; charset=utf-8", js),
          (e: unknown) => {
            res.writeHead(500, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
            res.end(failed(e as Error));
          },
        ),
    },
  ];
}
