import type { AccountCaller } from "../../src/domain/caller.js";
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

/**
 * A reply's whole tool_calls record, as the account reads it (a customer's own reads carry each call's id, name and
 * status only): parsed, [] when it has none.
 */
export async function teamToolCalls(
  url: string,
  auth: Record<string, string>,
  reply: { conversation_id: string; message_id: string },
): Promise<any[]> {
  const page = await getJson(
    url,
    "/get_messages_for_conversation",
    { conversation_id: reply.conversation_id, limit: 100 },
    auth,
  );
  if (page.status !== 200) throw new Error(`get_messages_for_conversation failed: ${page.status}`);
  const m = page.body.messages.find((x: { message_id: string }) => x.message_id === reply.message_id);
  if (!m) throw new Error(`no message ${reply.message_id} in the account's read`);
  return m.tool_calls ? JSON.parse(m.tool_calls) : [];
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

/** Invites a person into the account (as its admin) and accepts the invitation; returns their sign-in. */
export async function addMember(
  url: string,
  adminIdToken: string,
  email: string,
  role: "admin" | "operator" = "operator",
): Promise<{ memberId: string; email: string; password: string; idToken: string }> {
  const auth = { authorization: `Bearer ${adminIdToken}` };
  const inv = await postJson(url, "/v1/account/members", { email, role }, auth);
  if (inv.status !== 200) throw new Error(`invite failed: ${inv.status} ${JSON.stringify(inv.body)}`);
  const password = `pw-${email}-long`;
  const acc = await postJson(url, "/v1/invitations/accept", {
    invitation_code: inv.body.data.invitation_code,
    password,
  });
  if (acc.status !== 200) throw new Error(`accept failed: ${acc.status} ${JSON.stringify(acc.body)}`);
  const t = await postJson(url, "/get_id_token", { user_email_id: email, password });
  if (t.status !== 200) throw new Error(`member sign-in failed: ${t.status} ${JSON.stringify(t.body)}`);
  return { memberId: inv.body.data.member.member_id, email, password, idToken: t.body.data.idToken };
}

/** The account's owner as the domain sees a caller (for making objects straight through the app's services). */
export function ownerOf(a: { accountId: string; email: string }): AccountCaller {
  return {
    kind: "account",
    accountId: a.accountId,
    email: a.email,
    accountEmail: a.email,
    role: "admin",
    memberId: a.accountId,
  };
}

/** Adds a chatbot to the account (as its admin, `auth` its header) with one origin; returns its id. */
export async function addChatbot(url: string, auth: Record<string, string>, name: string): Promise<string> {
  const r = await postJson(url, "/v1/account/chatbots", { name, allowed_origins: ["https://billing.example"] }, auth);
  if (r.status !== 200) throw new Error(`create chatbot failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.chatbot_id as string;
}

/** Makes a team (as the account's admin); returns it. */
export async function addTeam(url: string, auth: Record<string, string>, team: Record<string, unknown>) {
  const r = await postJson(url, "/v1/account/teams", team, auth);
  if (r.status !== 200) throw new Error(`create team failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { team_id: string; name: string };
}
