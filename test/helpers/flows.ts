import { getJson, postJson } from "./http.js";
import type { TestAccount } from "./server.js";

/** Gets an access/refresh token pair over the JSON route. */
export async function issueTokens(url: string, a: TestAccount, userId: string, contact?: Record<string, string>) {
  const r = await postJson(url, "/ai_agent/get_access_token", {
    user_id: userId,
    chatbot_id: a.chatbotId,
    client_api_key: a.apiKey,
    ...(contact ? { contact } : {}),
  });
  if (r.status !== 200) throw new Error(`get_access_token failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as {
    access_token: string;
    refresh_token: string;
    access_token_expires_at: number;
    refresh_token_expires_at: number;
  };
}

/** Gets an ID token for the account with its API key. */
export async function idToken(url: string, a: TestAccount): Promise<string> {
  const r = await postJson(url, "/get_id_token", { user_email_id: a.email, client_api_key: a.apiKey });
  if (r.status !== 200) throw new Error(`get_id_token failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.idToken as string;
}

/** Sends a frame message; returns the parsed `data`. */
export async function send(url: string, accessToken: string, content: string, conversationId?: string) {
  const r = await postJson(url, `/ai_agent/send_message?access_token=${encodeURIComponent(accessToken)}`, {
    content,
    ...(conversationId ? { conversation_id: conversationId } : {}),
  });
  if (r.status !== 200) throw new Error(`send_message failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { conversation_id: string; user_message: any; reply?: any };
}

/** Lists contacts with an ID token. */
export function contacts(url: string, token: string, email: string, query: Record<string, string | number> = {}) {
  return getJson(
    url,
    "/get_contact_conversations",
    { user_email_id: email, ...query },
    { authorization: `Bearer ${token}` },
  );
}
