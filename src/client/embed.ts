/**
 * Server helpers for embedding the chat frame: two calls over the documented JSON routes (plain fetch, no
 * dependencies). Call them from your server only: they take your client API key and the user's refresh token.
 */

/** What createEmbedSession needs. */
export interface EmbedSessionOptions {
  /** The service's API address ({base_url}), e.g. https://aiagent.example. */
  baseUrl: string;
  /** Where the frame is served ({app_url}); the API address when not given. */
  appUrl?: string;
  /** Your client API key: a secret that never leaves your server. */
  clientApiKey: string;
  chatbotId: string;
  /** Your user's id, as your own system knows it. */
  userId: string;
  /**
   * What your system knows of the customer, shown in the inbox instead of the bare user id (the contact profile of
   * get_access_token). Each field is optional; a field given replaces the stored one.
   */
  contact?: EmbedContact;
  /** The page's origin, when the chatbot allows several (the host script adds it by itself). */
  hostOrigin?: string;
  /**
   * Put a one-time launch code in the frame's address instead of the access token (valid 60 s, used once, only under
   * hostOrigin or the chatbot's only allowed origin): a copied address, a log line or a Referer is then worthless.
   */
  launch?: boolean;
  /** The chat's language ("de", "pt-BR"), put in the frame's address; the host script's `locale` option does the same. */
  locale?: string;
}

/** The customer as the inbox shows them. */
export interface EmbedContact {
  name?: string;
  email?: string;
  phone?: string;
}

/** The request's `contact` object from the fields given, or nothing when none is. */
function contactProfile(c: EmbedContact | undefined): Record<string, string> | undefined {
  if (!c) return undefined;
  const profile: Record<string, string> = {};
  if (c.name) profile.contact_name = c.name;
  if (c.email) profile.email = c.email;
  if (c.phone) profile.phone_number = c.phone;
  return Object.keys(profile).length > 0 ? profile : undefined;
}

/** A user's chat session: the frame's address for the page, and the refresh token for your server to keep. */
export interface EmbedSession {
  /**
   * The frame's address: `{app_url}/chatbot-iframe/{chatbot_id}?launch=…` with `launch`, else the documented
   * `…?user_id=…&access_token=…`.
   */
  frameUrl: string;
  /** The launch code in frameUrl, with `launch`. */
  launchCode?: string;
  accessToken: string;
  /** Keep it on your server (e.g. in the user's session); never send it to a browser. */
  refreshToken: string;
  /** Epoch milliseconds. */
  accessTokenExpiresAt: number;
  refreshTokenExpiresAt: number;
}

/** The service refused (status and Connect `code`/`reason` say why) or could not be reached (status 0). */
export class EmbedError extends Error {
  override readonly name = "EmbedError";
  constructor(
    message: string,
    readonly status: number,
    /** Connect's error code, e.g. "unauthenticated". */
    readonly code?: string,
    /** The machine-readable reason, e.g. "TokenInvalidError". */
    readonly reason?: string,
  ) {
    super(message);
  }
}

function required(name: string, value: unknown): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`${name} is required`);
  return value;
}

async function post<T>(baseUrl: string, path: string, body: Record<string, unknown>): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw new EmbedError(`the AI agent service could not be reached: ${(e as Error).message}`, 0);
  }
  const json = (await res.json().catch(() => ({}))) as {
    data?: T;
    code?: string;
    message?: string;
    details?: { debug?: { reason?: string } }[];
  };
  if (!res.ok || json.data === undefined)
    throw new EmbedError(
      json.message ?? `HTTP ${res.status}`,
      res.status,
      json.code,
      json.details?.find((d) => d.debug?.reason)?.debug?.reason,
    );
  return json.data;
}

/** Issues a user's tokens (POST /ai_agent/get_access_token) and builds the frame's address from them. */
export async function createEmbedSession(o: EmbedSessionOptions): Promise<EmbedSession> {
  const baseUrl = required("baseUrl", o.baseUrl);
  const chatbotId = required("chatbotId", o.chatbotId);
  const userId = required("userId", o.userId);
  const contact = contactProfile(o.contact);
  const data = await post<{
    access_token: string;
    refresh_token: string;
    access_token_expires_at: number;
    refresh_token_expires_at: number;
    launch_code?: string;
  }>(baseUrl, "/ai_agent/get_access_token", {
    user_id: userId,
    chatbot_id: chatbotId,
    client_api_key: required("clientApiKey", o.clientApiKey),
    ...(contact ? { contact } : {}),
    ...(o.launch ? { launch_code: true, ...(o.hostOrigin ? { embed_origin: o.hostOrigin } : {}) } : {}),
  });
  const query = data.launch_code
    ? new URLSearchParams({ launch: data.launch_code })
    : new URLSearchParams({ user_id: userId, access_token: data.access_token });
  if (o.hostOrigin && !data.launch_code) query.set("host_origin", o.hostOrigin);
  if (o.locale) query.set("locale", o.locale);
  const appUrl = (o.appUrl ?? baseUrl).replace(/\/+$/, "");
  return {
    frameUrl: `${appUrl}/chatbot-iframe/${encodeURIComponent(chatbotId)}?${query}`,
    ...(data.launch_code ? { launchCode: data.launch_code } : {}),
    accessToken: data.access_token,
    refreshToken: data.refresh_token,
    accessTokenExpiresAt: data.access_token_expires_at,
    refreshTokenExpiresAt: data.refresh_token_expires_at,
  };
}

/**
 * A new access token from the refresh token you kept (POST /ai_agent/refresh_token). Send the page
 * `{ access_token, expires_at }` only: with refresh-token rotation on, the answer also carries the new
 * `refresh_token` (and its expiry), which your server keeps in place of the old one and never sends to the page.
 */
export function refreshAccessToken(o: {
  baseUrl: string;
  chatbotId: string;
  userId: string;
  refreshToken: string;
}): Promise<{ access_token: string; expires_at: number; refresh_token?: string; refresh_token_expires_at?: number }> {
  return post(required("baseUrl", o.baseUrl), "/ai_agent/refresh_token", {
    user_id: required("userId", o.userId),
    chatbot_id: required("chatbotId", o.chatbotId),
    refresh_token: required("refreshToken", o.refreshToken),
  });
}
