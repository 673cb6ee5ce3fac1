/**
 * The embedding route for Fastify: `app.register(aiagent({ user: (req) => ({ id, name, email }) }), { prefix:
 * "/aiagent" })` serves `POST /aiagent/session` and `POST /aiagent/refresh`, which the host script's `AiAgent.start`
 * calls.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { type EmbedRouteOptions, embedHeaders, embedRoute, endpointOf } from "./embed-route.js";

export type { EmbedRouteOptions, EmbedUser, RefreshTokenStore } from "./embed-route.js";

/** A Fastify plugin with the two endpoints; register it under the prefix your page's `AiAgent.start` names. */
export function aiagent(options: EmbedRouteOptions<FastifyRequest>): FastifyPluginAsync {
  const route = embedRoute(options);
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = await route.handle(
      { endpoint: endpointOf(req.url), method: req.method, ...embedHeaders(req.headers) },
      req,
    );
    return reply.code(status).send(body);
  };
  return async (app) => {
    app.post("/session", handler);
    app.post("/refresh", handler);
  };
}
