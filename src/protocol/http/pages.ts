import type { IncomingHttpHeaders } from "node:http";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorResponse } from "../rest/error-body.js";
import { type HttpRequest, type HttpResponse, pathOf, type Route } from "./types.js";

/** The verbs a page answers: GET and HEAD; POST only for a page that reads no body (the demo's refresh). */
export type PageVerb = "GET" | "HEAD" | "POST";

/**
 * What a page sees of its request: its verb, address and headers, without the body (there is no stream to read)
 * and without credentials (Authorization, Proxy-Authorization, and every cookie but the page's own). A page that
 * needs a credential judged asks the gate (protocol/gate.ts), which sees the whole request.
 */
export interface PageRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<IncomingHttpHeaders>;
  /** The client's address (for the limits a page's gate call counts against). */
  readonly peer: string;
}

/** A plain route of the server: a page, a script or stylesheet, a document, a probe. */
export interface PageRoute {
  /** What it serves, as the route table lists it. */
  readonly name: string;
  readonly verbs: readonly PageVerb[];
  /** The one path it answers, or a pattern of them. */
  readonly path: string | RegExp;
  /** A cookie of its own the page may read (never the console's session: only the gate judges that one). */
  readonly ownCookie?: string;
  /** The operator's scrape secret reaches it (Authorization): GET /metrics, which carries no account's data. */
  readonly operatorSecret?: boolean;
  /** Answers; a thrown error or a rejected promise is answered by the request boundary. */
  serve(req: PageRequest, res: HttpResponse): unknown;
}

const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

/** The request as a page may see it. */
export function pageRequest(req: HttpRequest, page: Pick<PageRoute, "ownCookie" | "operatorSecret">): PageRequest {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(":") || CREDENTIAL_HEADERS.has(name)) continue;
    headers[name] = value as string;
  }
  // HTTP/2 names the host only in its pseudo-header.
  const authority = req.headers[":authority"];
  if (headers.host === undefined && typeof authority === "string") headers.host = authority;
  if (page.operatorSecret && req.headers.authorization !== undefined) headers.authorization = req.headers.authorization;
  const own = page.ownCookie && ownCookie(req.headers.cookie, page.ownCookie);
  if (own) headers.cookie = own;
  return { method: req.method ?? "GET", url: req.url ?? "/", headers, peer: req.socket?.remoteAddress ?? "" };
}

function ownCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    if (part.trim().startsWith(`${name}=`)) return part.trim();
  }
  return undefined;
}

/** Whether a page answers this path (any verb). */
export function pageMatches(page: PageRoute, path: string): boolean {
  return typeof page.path === "string" ? page.path === path : page.path.test(path);
}

/**
 * Serves the pages: the first whose path matches answers, with the view of the request it is allowed; a verb it
 * does not take is 405. A path no page answers goes on to the next route.
 */
export function servePages(pages: readonly PageRoute[]): Route {
  return (req, res) => {
    const path = pathOf(req);
    const page = pages.find((p) => pageMatches(p, path));
    if (!page) return false;
    if (!(page.verbs as readonly string[]).includes(req.method ?? "")) {
      const allow = page.verbs.join(", ");
      const e = errorResponse(
        new ConnectError(`${req.method} is not allowed on ${path}; use ${allow}`, Code.Unimplemented),
        false,
      );
      res.writeHead(405, { ...e.headers, allow });
      res.end(e.body);
      return true;
    }
    const out = page.serve(pageRequest(req, page), res);
    return out instanceof Promise ? out : true;
  };
}
