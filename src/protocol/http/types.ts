import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

/** A request on either HTTP version. */
export type HttpRequest = IncomingMessage | Http2ServerRequest;
/** A response on either HTTP version. */
export type HttpResponse = ServerResponse | Http2ServerResponse;
/**
 * Serves the request and returns true (or the promise of its answer, whose rejection the request boundary answers),
 * or returns false to let the next route try.
 */
export type Route = (req: HttpRequest, res: HttpResponse) => boolean | Promise<unknown>;

/** Writes a small JSON response. */
export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** The path of a request, without its query. */
export function pathOf(req: { readonly url?: string | undefined }): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}
