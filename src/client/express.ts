/**
 * The embedding route for Express (4 or 5): `app.use("/aiagent", aiagent({ user: (req) => ({ id, name, email }) }))`
 * serves `POST /aiagent/session` and `POST /aiagent/refresh`, which the host script's `AiAgent.start` calls.
 */
import { type EmbedRouteOptions, embedHeaders, embedRoute, endpointOf } from "./embed-route.js";

export type { EmbedRouteOptions, EmbedUser, RefreshTokenStore } from "./embed-route.js";

/** What the helper reads of Express's request (Express's own `Request` fits). */
export interface ExpressRequestLike {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}
/** What the helper uses of Express's response. */
export interface ExpressResponseLike {
  status(code: number): { json(body: unknown): unknown };
}

/** Express middleware for the route it is mounted at; other paths go on to `next`. */
export function aiagent<Req extends ExpressRequestLike = ExpressRequestLike>(
  options: EmbedRouteOptions<Req>,
): (req: Req, res: ExpressResponseLike, next: (err?: unknown) => void) => void {
  const route = embedRoute(options);
  return (req, res, next) => {
    const endpoint = endpointOf(req.path);
    if (endpoint !== "session" && endpoint !== "refresh") return next();
    route
      .handle({ endpoint, method: req.method, ...embedHeaders(req.headers) }, req)
      .then(({ status, body }) => res.status(status).json(body), next);
  };
}
