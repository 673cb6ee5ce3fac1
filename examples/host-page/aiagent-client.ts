/** The two token calls a client's server makes to the AI agent service, server to server. */

/** Tokens from POST /ai_agent/get_access_token. */
export interface TokenSet {
  access_token: string;
  refresh_token: string;
  access_token_expires_at: number;
  refresh_token_expires_at: number;
}

/** The service refused or could not be reached; `status` is 0 for a network failure. */
export class AiAgentError extends Error {
  override readonly name = "AiAgentError";
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function post<T>(serviceUrl: string, path: string, body: Record<string, string>): Promise<T> {
  let res: Response;
  try {
    res = await fetch(new URL(path, serviceUrl), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    throw new AiAgentError(`the AI agent service could not be reached: ${(e as Error).message}`, 0);
  }
  const json = (await res.json().catch(() => ({}))) as { data?: T; message?: string };
  if (!res.ok || !json.data) throw new AiAgentError(json.message ?? `HTTP ${res.status}`, res.status);
  return json.data;
}

/** Issues an access token and a refresh token for one of your users (needs your client API key). */
export function getAccessToken(
  serviceUrl: string,
  p: { userId: string; chatbotId: string; clientApiKey: string },
): Promise<TokenSet> {
  return post<TokenSet>(serviceUrl, "/ai_agent/get_access_token", {
    user_id: p.userId,
    chatbot_id: p.chatbotId,
    client_api_key: p.clientApiKey,
  });
}

/** A new access token from the refresh token you stored. */
export function refreshAccessToken(
  serviceUrl: string,
  p: { userId: string; chatbotId: string; refreshToken: string },
): Promise<{ access_token: string; expires_at: number }> {
  return post(serviceUrl, "/ai_agent/refresh_token", {
    user_id: p.userId,
    chatbot_id: p.chatbotId,
    refresh_token: p.refreshToken,
  });
}
