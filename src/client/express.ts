/**
 * The embedding route for Express (4 or 5): `app.use("/aiagent", aiagent({ user: (req) => ({ id, name, email }) }))`
 * serves `POST /aiagent/session` and `POST /aiagent/refresh`, which the host script's `AiAgent.start` calls.
 */
import type { NextFunction, Request, Response } from "express";
import { type EmbedRouteOptions, embedHeaders, embedRoute, endpointOf } from "./embed-route.js";

export type { EmbedRouteOptions, EmbedUser, RefreshTokenStore } from "./embed-route.js";

/** Express middleware for the route it is mounted at; other paths go on to `next`. */
export function aiagent(
  options: EmbedRouteOptions<Request>,
): (req: Request, res: Response, next: NextFunction) => void {
  const route = embedRoute(options);
  return (req, res, next) => {
    const endpoint = endpointOf(req.path);
    if (endpoint !== "session" && endpoint !== "refresh") return next();
    route
      .handle({ endpoint, method: req.method, ...embedHeaders(req.headers) }, req)
      .then(({ status, body }) => res.status(status).json(body), next);
  };
}
