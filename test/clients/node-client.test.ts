import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAiAgentClient, errorReason, type Protocol, withBearer } from "../../src/client/index.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

const run = promisify(execFile);
let s: TestServer;
let a: TestAccount;
let conversationId: string;
const USER = "node-client-user";

beforeAll(async () => {
  s = await startServer();
  a = await s.account();
  const t = await issueTokens(s.url, a, USER);
  conversationId = (await send(s.url, t.access_token, "Hello from the frame")).conversation_id;
});
afterAll(() => s.close(true));

describe("examples/node-client (imports aiagent/client)", () => {
  it("gets a token, refreshes it and lists the contacts over Connect", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--conditions=source", "--import", "tsx", "examples/node-client/main.ts"],
      {
        env: {
          ...process.env,
          AIAGENT_URL: s.url,
          AIAGENT_EMAIL: a.email,
          AIAGENT_CLIENT_API_KEY: a.apiKey,
          AIAGENT_CHATBOT_ID: a.chatbotId,
          AIAGENT_USER_ID: USER,
        },
        timeout: scaled(30_000),
      },
    );
    const out = JSON.parse(stdout);
    expect(out.access_token_expires_at).toBeGreaterThan(Date.now());
    expect(out.refresh_token_expires_at).toBeGreaterThan(out.access_token_expires_at);
    expect(out.refreshed.expires_at).toBeGreaterThan(Date.now());
    expect(out.contacts).toEqual([
      { user_id: USER, contact_name: "Ada Lovelace", unread_message_count: "1", conversation_status: "live" },
    ]);
    // The refreshed access token is real: the frame's route accepts it and shows the customer's conversation.
    const r = await getJson(s.url, "/ai_agent/conversations", { access_token: out.refreshed.access_token });
    expect(r.status).toBe(200);
    expect(r.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([
      conversationId,
    ]);
    // Secrets are used, never printed.
    expect(stdout).not.toContain(a.apiKey);
    expect(stdout).not.toMatch(/rt_[A-Za-z0-9_-]{20,}/);
  });
});

describe("createAiAgentClient", () => {
  const variants: { protocol: Protocol; httpVersion?: "1.1" | "2" }[] = [
    { protocol: "connect" },
    { protocol: "connect", httpVersion: "2" },
    { protocol: "grpc" },
    { protocol: "grpc-web" },
  ];
  for (const v of variants) {
    it(`speaks ${v.protocol} over HTTP/${v.protocol === "grpc" ? "2" : (v.httpVersion ?? "1.1")} to the same port`, async () => {
      const client = createAiAgentClient(s.url, { ...v, defaultTimeoutMs: 10_000 });
      try {
        const t = (await client.tokens.getAccessToken({ userId: USER, chatbotId: a.chatbotId, clientApiKey: a.apiKey }))
          .data!;
        expect(t.accessTokenExpiresAt).toBeGreaterThan(BigInt(Date.now()));
        const page = await client.conversations.getMessagesForConversation(
          { conversationId },
          withBearer(t.accessToken),
        );
        expect(page.messages[0]).toMatchObject({
          conversationId,
          messageOrder: 1,
          role: "user",
          content: "Hello from the frame",
        });
        const failed = await client.conversations
          .listFrameConversations({}, withBearer("not-a-token"))
          .catch((e: unknown) => e);
        expect(errorReason(failed)).toBe("TokenInvalidError");
        // The account API with an ID token: a chatbot made, read back, a key made (shown once) and listed.
        const id = (
          await client.tokens.getIdToken({
            userEmailId: a.email,
            credential: { case: "clientApiKey", value: a.apiKey },
          })
        ).data!.idToken;
        const bot = (
          await client.accounts.createChatbot(
            { name: `Bot over ${v.protocol}`, allowedOrigins: ["https://shop.example"] },
            withBearer(id),
          )
        ).data!;
        const read = (await client.accounts.getChatbot({ chatbotId: bot.chatbotId }, withBearer(id))).data!;
        expect(read.name).toBe(`Bot over ${v.protocol}`);
        const key = (await client.accounts.createApiKey({ name: v.protocol }, withBearer(id))).data!;
        const keys = (await client.accounts.listApiKeys({}, withBearer(id))).data!.apiKeys;
        expect(keys.map((k) => k.apiKeyId)).toContain(key.apiKey!.apiKeyId);
        expect(JSON.stringify(keys)).not.toContain(key.clientApiKey);
      } finally {
        client.close();
      }
    });
  }
});
