// A client's Node server using the typed client: get a token pair for a customer, refresh the access token,
// then list the account's contacts with an ID token, all over the Connect protocol.
//
//   AIAGENT_URL=http://localhost:8080 AIAGENT_EMAIL=… AIAGENT_CLIENT_API_KEY=… AIAGENT_CHATBOT_ID=… \
//     node --conditions=source --import tsx examples/node-client/main.ts
//
// (--conditions=source runs the client from its TypeScript source; after `npm run build` it is not needed.)
// It prints one JSON object. The refresh token and the API key are secrets: they are used, never printed.
import { createAiAgentClient, errorReason, withBearer } from "aiagent/client";

function env(name: string, fallback?: string): string {
  const v = process.env[name] ?? fallback;
  if (v === undefined || v === "") throw new Error(`set ${name}`);
  return v;
}

const baseUrl = env("AIAGENT_URL", "http://localhost:8080");
const email = env("AIAGENT_EMAIL");
const clientApiKey = env("AIAGENT_CLIENT_API_KEY");
const chatbotId = env("AIAGENT_CHATBOT_ID");
const userId = env("AIAGENT_USER_ID", "customer-42");

const client = createAiAgentClient(baseUrl, { protocol: "connect" });
try {
  // 1. A token pair for one customer: the access token goes to the frame, the refresh token stays here.
  const issued = await client.tokens.getAccessToken({
    userId,
    chatbotId,
    clientApiKey,
    contact: { contactName: "Ada Lovelace", email: "ada@example.com" },
  });
  const tokens = issued.data!;

  // 2. When the frame reports [TOKEN_REFRESH], trade the refresh token for a new access token.
  const refreshed = (await client.tokens.refreshToken({ userId, chatbotId, refreshToken: tokens.refreshToken })).data!;

  // 3. The account API takes an ID token as a Bearer token.
  const id = (
    await client.tokens.getIdToken({ userEmailId: email, credential: { case: "clientApiKey", value: clientApiKey } })
  ).data!;
  const page = (
    await client.conversations.getContactConversations({ userEmailId: email, limit: 10 }, withBearer(id.idToken))
  ).data!.data!;

  console.log(
    JSON.stringify(
      {
        access_token_expires_at: Number(tokens.accessTokenExpiresAt),
        refresh_token_expires_at: Number(tokens.refreshTokenExpiresAt),
        refreshed: { access_token: refreshed.accessToken, expires_at: Number(refreshed.expiresAt) },
        contacts: page.contacts.map((c) => ({
          user_id: c.userId,
          contact_name: c.contactName,
          unread_message_count: c.unreadMessageCount,
          conversation_status: c.conversationStatus,
        })),
        has_more: page.hasMore,
      },
      null,
      2,
    ),
  );
} catch (e) {
  console.error(`failed: ${e instanceof Error ? e.message : String(e)} (reason: ${errorReason(e) ?? "none"})`);
  process.exitCode = 1;
} finally {
  client.close();
}
