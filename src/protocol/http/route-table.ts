import type { DescMethod } from "@bufbuild/protobuf";
import { type HttpRoute, httpRoutes } from "../rest/http-rules.js";
import type { ServiceBinding } from "../rest/transcoder.js";
import { type PageRoute, servePages } from "./pages.js";
import type { Route } from "./types.js";

/**
 * Everything the server answers, and the only thing its request chain is built from: the contract's RPCs (on their
 * JSON routes and on the Connect, gRPC and gRPC-Web paths, all through the gate of their declared access) and the
 * pages (GET assets and documents that see neither a body nor a credential; see pages.ts).
 */
export interface RouteTable {
  /** The JSON routes, read from the contract's google.api.http annotations (the transcoder serves these). */
  readonly json: readonly HttpRoute[];
  /** Every RPC, served at /<service>/<method> by the Connect adapter. */
  readonly rpc: readonly DescMethod[];
  readonly pages: readonly PageRoute[];
}

/** The table of a server serving these bindings and pages. */
export function routeTable(bindings: readonly ServiceBinding[], pages: readonly PageRoute[]): RouteTable {
  const services = bindings.map((b) => b.desc);
  return { json: httpRoutes(services), rpc: services.flatMap((s) => s.methods), pages };
}

/**
 * The request chain of a table: the JSON routes first (a page never shadows one), then the pages, then the Connect
 * adapter, which serves exactly the table's RPCs.
 */
export function tableRoutes(table: RouteTable, served: { transcoder: Route; connect: Route }): Route[] {
  return [served.transcoder, servePages(table.pages), served.connect];
}
