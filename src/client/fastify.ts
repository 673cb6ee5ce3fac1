/**
 * The embedding route for Fastify: `app.register(aiagent({ user: (req) => ({ id, name, email }) }), { prefix:
 * "/aiagent" })` serves `POST /aiagent/session` and `POST /aiagent/refresh`, which the host script's `AiAgent.start`
 * calls.
 */
import { type EmbedRouteOptions, embedHeaders, embedRoute, endpointOf } from "./embed-route.js";

export type { EmbedRouteOptions, EmbedUser, RefreshTokenStore } from "./embed-route.js";

/** What the helper reads of Fastify's request (Fastify's own `FastifyRequest` fits). */
export interface FastifyRequestLike {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}
/** What the helper uses of Fastify's reply. */
export interface FastifyReplyLike {
  code(status: number): { send(body: unknown): unknown };
}
/** What the plugin uses of the Fastify instance it is registered on. */
export interface FastifyInstanceLike<Req> {
  post(path: string, handler: (req: Req, reply: FastifyReplyLike) => Promise<unknown>): unknown;
}

/** A Fastify plugin with the two endpoints; register it under the prefix your page's `AiAgent.start` names. */
export function aiagent<Req extends FastifyRequestLike = FastifyRequestLike>(
  options: EmbedRouteOptions<Req>,
): (app: FastifyInstanceLike<Req>) => Promise<void> {
  const route = embedRoute(options);
  const handler = async (req: Req, reply: FastifyReplyLike) => {
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
