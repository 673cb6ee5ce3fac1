import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, expect } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { dbChecksum, expectNoSecrets } from "./support.js";

// 2 accounts × 2 chatbots × 2 customers. The customers have the same user_id in every account and chatbot,
// so nothing can be reached by a matching user_id alone.
export const CUSTOMERS = ["alice", "bob"];

interface Conversation {
  account: number;
  chatbot: number;
  customer: string;
  id: string;
}
interface FramePrincipal {
  kind: "frame";
  name: string;
  token: string;
  owns: (c: Conversation) => boolean;
}
interface AccountPrincipal {
  kind: "account";
  name: string;
  token: string;
  email: string;
  owns: (c: Conversation) => boolean;
}

export let s: TestServer;
export const conversations: Conversation[] = [];
export const frames: FramePrincipal[] = [];
export const accounts: AccountPrincipal[] = [];
export const emails: string[] = [];
export const secrets = new Set<string>();

/**
 * The BOLA files' world (split only so that its parts run in parallel): one server, 2 accounts × 2 chatbots × 2
 * customers and their conversations, started once per file.
 */
export function bolaWorld(): void {
  beforeAll(async () => {
    s = await startServer();
    for (let ai = 0; ai < 2; ai++) {
      const a = await s.account();
      secrets.add(a.apiKey).add(a.password);
      emails.push(a.email);
      const chatbots = [
        a.chatbotId,
        (await s.app.accounts.createChatbot(a.email, "Second bot", ["https://shop.example"], [])).chatbotId,
      ];
      for (let ci = 0; ci < 2; ci++) {
        for (const customer of CUSTOMERS) {
          const t = await issueTokens(s.url, { ...a, chatbotId: chatbots[ci]! }, customer);
          secrets.add(t.access_token).add(t.refresh_token);
          const id = (await send(s.url, t.access_token, `hello from ${customer}`)).conversation_id;
          const mine = { account: ai, chatbot: ci, customer, id };
          conversations.push(mine);
          frames.push({
            kind: "frame",
            name: `frame ${ai}/${ci}/${customer}`,
            token: t.access_token,
            owns: (c) => c === mine,
          });
        }
      }
      const token = await idToken(s.url, a);
      secrets.add(token);
      accounts.push({ kind: "account", name: `account ${ai}`, token, email: a.email, owns: (c) => c.account === ai });
    }
  });

  afterAll(async () => {
    expectNoSecrets(s.logs, secrets);
    await s.close(true);
  });
}

type Outcome = { status: number; body: unknown };
type Route<P> = (p: P, conversationId: string) => Promise<Outcome>;

async function stream(token: string, conversationId: string): Promise<Outcome> {
  const r = await fetch(`${s.url}/ai_agent/send_message_stream?access_token=${token}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ conversation_id: conversationId, content: "hi" }),
  });
  const text = await r.text();
  return { status: r.status, body: r.status === 200 ? "stream" : JSON.parse(text) };
}

/** A Connect call's outcome in the same shape: 200, or the error's code and message. */
async function rpc(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    await call();
    return { status: 200, body: "ok" };
  } catch (e) {
    const err = ConnectError.from(e);
    return { status: err.code, body: err.rawMessage };
  }
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
/** A file each attachment route would accept from the conversation's owner: a line of plain text. */
const TEXT_FILE = { fileName: "note.txt", file: new TextEncoder().encode("order 1234\n") };
const TEXT_FILE_JSON = { file_name: "note.txt", file: Buffer.from(TEXT_FILE.file).toString("base64") };
const connect = () => rpcClients(s.url, "connect-binary").conversations;

export const FRAME_ROUTES: Record<string, Route<FramePrincipal>> = {
  "GET /get_messages_for_conversation": (p, id) =>
    getJson(s.url, "/get_messages_for_conversation", { conversation_id: id, access_token: p.token }),
  "POST /ai_agent/send_message": (p, id) =>
    postJson(s.url, `/ai_agent/send_message?access_token=${p.token}`, { conversation_id: id, content: "hi" }),
  "POST /ai_agent/send_message_stream": (p, id) => stream(p.token, id),
  "RPC GetMessagesForConversation": (p, id) =>
    rpc(() => connect().getMessagesForConversation({ conversationId: id, accessToken: p.token })),
  "RPC SendMessage": (p, id) =>
    rpc(() => connect().sendMessage({ conversationId: id, content: "hi" }, bearer(p.token))),
  "POST /send_typing": (p, id) => postJson(s.url, `/send_typing?access_token=${p.token}`, { conversation_id: id }),
  "RPC SendTyping": (p, id) => rpc(() => connect().sendTyping({ conversationId: id }, bearer(p.token))),
  "POST /ai_agent/send_attachment": (p, id) =>
    postJson(s.url, `/ai_agent/send_attachment?access_token=${p.token}`, { conversation_id: id, ...TEXT_FILE_JSON }),
  "RPC SendAttachment": (p, id) =>
    rpc(() => connect().sendAttachment({ conversationId: id, ...TEXT_FILE }, bearer(p.token))),
  "RPC SendMessageStream": (p, id) =>
    rpc(async () => {
      for await (const _ of connect().sendMessageStream({ conversationId: id, content: "hi" }, bearer(p.token)));
    }),
};

export const ACCOUNT_ROUTES: Record<string, Route<AccountPrincipal>> = {
  "GET /get_messages_for_conversation": (p, id) =>
    getJson(s.url, "/get_messages_for_conversation", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /mark_conversation_read": (p, id) =>
    postJson(s.url, "/mark_conversation_read", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "GET /list_conversation_activity": (p, id) =>
    getJson(s.url, "/list_conversation_activity", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /mark_conversation_unread": (p, id) =>
    postJson(s.url, "/mark_conversation_unread", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /take_over_conversation": (p, id) =>
    postJson(s.url, "/take_over_conversation", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /reply_to_conversation": (p, id) =>
    postJson(
      s.url,
      "/reply_to_conversation",
      { conversation_id: id, content: "operator here" },
      { authorization: `Bearer ${p.token}` },
    ),
  "POST /close_conversation": (p, id) =>
    postJson(s.url, "/close_conversation", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /reopen_conversation": (p, id) =>
    postJson(s.url, "/reopen_conversation", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "POST /add_conversation_note": (p, id) =>
    postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id: id, content: "a note" },
      {
        authorization: `Bearer ${p.token}`,
      },
    ),
  "GET /list_conversation_notes": (p, id) =>
    getJson(s.url, "/list_conversation_notes", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "RPC AddConversationNote": (p, id) =>
    rpc(() => connect().addConversationNote({ conversationId: id, content: "a note" }, bearer(p.token))),
  "RPC ListConversationNotes": (p, id) =>
    rpc(() => connect().listConversationNotes({ conversationId: id }, bearer(p.token))),
  "GET /list_tool_approvals": (p, id) =>
    getJson(s.url, "/list_tool_approvals", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "RPC ListToolApprovals": (p, id) =>
    rpc(() => rpcClients(s.url, "connect-binary").agents.listToolApprovals({ conversationId: id }, bearer(p.token))),
  "RPC GetMessagesForConversation": (p, id) =>
    rpc(() => connect().getMessagesForConversation({ conversationId: id }, bearer(p.token))),
  "RPC MarkConversationRead": (p, id) =>
    rpc(() => connect().markConversationRead({ conversationId: id }, bearer(p.token))),
  "RPC ListConversationActivity": (p, id) =>
    rpc(() => connect().listConversationActivity({ conversationId: id }, bearer(p.token))),
  "RPC MarkConversationUnread": (p, id) =>
    rpc(() => connect().markConversationUnread({ conversationId: id }, bearer(p.token))),
  "RPC TakeOverConversation": (p, id) =>
    rpc(() => connect().takeOverConversation({ conversationId: id }, bearer(p.token))),
  "POST /reply_with_attachment": (p, id) =>
    postJson(
      s.url,
      "/reply_with_attachment",
      { conversation_id: id, ...TEXT_FILE_JSON },
      { authorization: `Bearer ${p.token}` },
    ),
  "RPC ReplyWithAttachment": (p, id) =>
    rpc(() => connect().replyWithAttachment({ conversationId: id, ...TEXT_FILE }, bearer(p.token))),
  "RPC ReplyToConversation": (p, id) =>
    rpc(() => connect().replyToConversation({ conversationId: id, content: "operator here" }, bearer(p.token))),
  "RPC CloseConversation": (p, id) => rpc(() => connect().closeConversation({ conversationId: id }, bearer(p.token))),
  "RPC ReopenConversation": (p, id) => rpc(() => connect().reopenConversation({ conversationId: id }, bearer(p.token))),
  "POST /send_typing": (p, id) =>
    postJson(s.url, "/send_typing", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "RPC SendTyping": (p, id) => rpc(() => connect().sendTyping({ conversationId: id }, bearer(p.token))),
  "POST /send_viewing": (p, id) =>
    postJson(s.url, "/send_viewing", { conversation_id: id }, { authorization: `Bearer ${p.token}` }),
  "RPC SendViewing": (p, id) => rpc(() => connect().sendViewing({ conversationId: id }, bearer(p.token))),
};

/** Every (principal, conversation) pair on one route: only the owner succeeds; the rest look exactly like a random id and change nothing. */
export async function matrix<P extends FramePrincipal | AccountPrincipal>(
  principals: P[],
  name: string,
  route: Route<P>,
) {
  const refusal = name.startsWith("RPC ") ? Code.NotFound : 404;
  let owned = 0;
  let refused = 0;
  for (const p of principals) {
    for (const c of conversations) {
      if (p.owns(c)) {
        const r = await route(p, c.id);
        expect(r.status, `${p.name} on its own ${c.id}: ${JSON.stringify(r.body)}`).toBe(200);
        owned++;
        continue;
      }
      const before = dbChecksum(sqliteDb(s.app));
      const forbidden = await route(p, c.id);
      const random = await route(p, randomUUID());
      expect(dbChecksum(sqliteDb(s.app)), `${p.name} changed ${c.account}/${c.chatbot}/${c.customer}`).toBe(before);
      // Pinned: "not found" on every door (a 500 for both would otherwise pass as "the same").
      expect(forbidden.status, `${p.name} on another's ${c.id}`).toBe(refusal);
      expect({ status: forbidden.status, body: forbidden.body }).toEqual({ status: random.status, body: random.body });
      refused++;
    }
  }
  return { owned, refused };
}
