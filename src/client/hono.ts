/**
 * The embedding route for Hono: `app.post("/aiagent/*", aiagent({ user: (c) => ({ id, name, email }) }))` serves
 * `POST /aiagent/session` and `POST /aiagent/refresh`, which the host script's `AiAgent.start` calls.
 */
import type { Context } from "hono";
import { type EmbedRouteOptions, embedRoute, endpointOf } from "./embed-route.js";

export type { EmbedRouteOptions, EmbedUser, RefreshTokenStore } from "./embed-route.js";

/** A Hono handler for `{route}/*`: the last segment of the path says which endpoint. */
export function aiagent(options: EmbedRouteOptions<Context>): (c: Context) => Promise<Response> {
  const route = embedRoute(options);
  return async (c) => {
    const { status, body } = await route.handle(
      {
        endpoint: endpointOf(c.req.path),
        method: c.req.method,
        origin: c.req.header("origin"),
        requestedWith: c.req.header("x-requested-with"),
      },
      c,
    );
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
}
