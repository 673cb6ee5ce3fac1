/**
 * The one route a client's server mounts for the host script (`AiAgent.start`): `POST {route}/session` answers the
 * frame's address with a one-time launch code, `POST {route}/refresh` a new access token. The framework helpers
 * (`aiagent/client/express`, `…/fastify`, `…/hono`) wrap it; the server supplies only who is signed in.
 */
import { createEmbedSession, EmbedError, refreshAccessToken } from "./embed.js";

/** The signed-in user, from your own session: the id your system knows them by, and what the inbox shows. */
export interface EmbedUser {
  /** Empty or missing: nobody is signed in (the route answers 401). */
  id?: string | null;
  name?: string;
  email?: string;
  phone?: string;
}

/** Where the refresh tokens are kept: on your server only, never in the browser. */
export interface RefreshTokenStore {
  get(userId: string): string | undefined | Promise<string | undefined>;
  /** `expiresAt`: epoch milliseconds, after which the token is worthless. */
  set(userId: string, refreshToken: string, expiresAt: number): void | Promise<void>;
}

/** What a framework helper takes. */
export interface EmbedRouteOptions<Req> {
  /** Who is signed in, from your own session; null, undefined or no id when nobody is. */
  user: (req: Req) => EmbedUser | null | undefined | Promise<EmbedUser | null | undefined>;
  /** The service's API address; AIAGENT_URL by default. */
  baseUrl?: string;
  /** Where the frame is served; AIAGENT_APP_URL, else baseUrl. */
  appUrl?: string;
  /** AIAGENT_CHATBOT_ID by default. */
  chatbotId?: string;
  /** Your client API key; AIAGENT_CLIENT_API_KEY by default. It never leaves your server. */
  clientApiKey?: string;
  /** Where refresh tokens are kept; this process's memory by default (use a shared store with several instances). */
  store?: RefreshTokenStore;
  /** Where a refusal's real cause is written; console.error by default. */
  log?: (line: string) => void;
}

/** What the route answers: a status and a JSON body. */
export interface EmbedAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The request as the route needs it: which of the two endpoints, and two headers. */
export interface EmbedRequest {
  /** The path's last segment: "session" or "refresh" (anything else is 404). */
  endpoint: string;
  method: string;
  /** The page's origin (the browser sends it with a POST): the launch code works only there. */
  origin?: string | undefined;
  /** Must be "aiagent-host": a custom header no other site can send without a CORS preflight, never granted. */
  requestedWith?: string | undefined;
}

/** The refresh tokens in this process's memory, each dropped once expired. */
export function memoryStore(): RefreshTokenStore {
  const tokens = new Map<string, { token: string; expiresAt: number }>();
  return {
    get(userId) {
      const kept = tokens.get(userId);
      if (kept && kept.expiresAt > Date.now()) return kept.token;
      tokens.delete(userId);
      return undefined;
    },
    set(userId, token, expiresAt) {
      const now = Date.now();
      for (const [id, kept] of tokens) if (kept.expiresAt <= now) tokens.delete(id);
      tokens.set(userId, { token, expiresAt });
    },
  };
}

function setting(given: string | undefined, name: string, fallback?: string): string {
  const value = given ?? process.env[name] ?? fallback;
  if (!value) throw new TypeError(`aiagent: give ${name} (the environment variable) or its option`);
  return value;
}

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The route's two endpoints, for any framework: `handle(request, req)` answers one request. */
export function embedRoute<Req>(options: EmbedRouteOptions<Req>): {
  handle(request: EmbedRequest, req: Req): Promise<EmbedAnswer>;
} {
  if (typeof options?.user !== "function") throw new TypeError("aiagent: user must be a function of the request");
  const baseUrl = setting(options.baseUrl, "AIAGENT_URL");
  const appUrl = setting(options.appUrl, "AIAGENT_APP_URL", baseUrl);
  const chatbotId = setting(options.chatbotId, "AIAGENT_CHATBOT_ID");
  const clientApiKey = setting(options.clientApiKey, "AIAGENT_CLIENT_API_KEY");
  const store = options.store ?? memoryStore();
  const log = options.log ?? ((line: string) => console.error(line));

  async function answer(request: EmbedRequest, req: Req): Promise<EmbedAnswer> {
    if (request.method !== "POST" || (request.endpoint !== "session" && request.endpoint !== "refresh"))
      return { status: 404, body: { error: "not found" } };
    if (request.requestedWith !== "aiagent-host")
      return { status: 403, body: { error: "x-requested-with: aiagent-host is required" } };
    const user = await options.user(req);
    const userId = user?.id;
    if (!userId) return { status: 401, body: { error: "nobody is signed in" } };
    if (request.endpoint === "session") {
      const s = await createEmbedSession({
        baseUrl,
        appUrl,
        clientApiKey,
        chatbotId,
        userId,
        contact: { name: user.name, email: user.email, phone: user.phone },
        ...(request.origin ? { hostOrigin: request.origin } : {}),
        launch: true,
      });
      await store.set(userId, s.refreshToken, s.refreshTokenExpiresAt);
      return { status: 200, body: { frame_url: s.frameUrl } };
    }
    const refreshToken = await store.get(userId);
    if (!refreshToken) return { status: 401, body: { error: "no chat session: reload the page" } };
    const fresh = await refreshAccessToken({ baseUrl, chatbotId, userId, refreshToken });
    // With rotation on, the answer carries the next refresh token: kept here, never sent on.
    if (fresh.refresh_token) await store.set(userId, fresh.refresh_token, fresh.refresh_token_expires_at ?? 0);
    return { status: 200, body: { access_token: fresh.access_token, expires_at: fresh.expires_at } };
  }

  return {
    async handle(request, req) {
      try {
        return await answer(request, req);
      } catch (e) {
        if (!(e instanceof EmbedError)) throw e;
        log(`aiagent: ${e.message}`); // the real cause: a refused key, an origin not allowed…
        return { status: 502, body: { error: `the chat service refused: ${e.message}` } };
      }
    },
  };
}

/** The two headers the route reads, from Node's request headers. */
export function embedHeaders(headers: Record<string, string | string[] | undefined>) {
  return { origin: header(headers.origin), requestedWith: header(headers["x-requested-with"]) };
}

/** The last segment of a path, without its query: which endpoint was asked for. */
export function endpointOf(path: string): string {
  return path.split("?")[0]!.replace(/\/+$/, "").split("/").pop() ?? "";
}
