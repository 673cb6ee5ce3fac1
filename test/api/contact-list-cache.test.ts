import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import type { FrameCaller } from "../../src/domain/caller.js";
import { createLogger } from "../../src/log.js";
import { contacts, idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Contact list pages are remembered once read twice (src/domain/conversation/contact-list-cache.ts). A remembered
// page must never be served once anything that changes it has committed: each kind of change below is made after
// the page is remembered (the test checks that the read before the change came from the cache), most of them by a
// second instance on the same database (SQLite: another connection to the file, as another process would have;
// PostgreSQL, in the api-postgres project: another instance, whose notifications this one may not have heard yet).

let s: TestServer;
/** A second instance of the service on the same database. */
let other: App;

beforeAll(async () => {
  s = await startServer();
  other = await buildApp(s.app.config, createLogger("silent"), { dispatch: false, clock: s.clock });
});
afterAll(async () => {
  await other?.close();
  await s.close(true);
});

interface Listed {
  contact_id: string;
  user_id: string;
  contact_name: string;
  email: string;
  conversation_status: string;
  assigned_to: string;
  unread_message_count: string;
  latest_message_time: string;
  latest_conversation_id: string;
  chatbot_name: string;
}

/** An account with three customers who each wrote once (c3 last), and its owner's ID token. */
async function inbox() {
  const a = await s.account();
  const token = await idToken(s.url, a);
  const users: { userId: string; access: string; conversationId: string }[] = [];
  for (const userId of ["c1", "c2", "c3"]) {
    const access = (await issueTokens(s.url, a, userId, { contact_name: `Name ${userId}` })).access_token;
    const conversationId = (await send(s.url, access, `hello from ${userId}`)).conversation_id;
    users.push({ userId, access, conversationId });
    // Apart in time, so the order is by time alone.
    s.clock.advance(5);
  }
  return { a, token, users };
}

async function list(a: TestAccount, token: string, query: Record<string, string> = {}) {
  const r = await contacts(s.url, token, a.email, query);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { contacts: r.body.data.data.contacts as Listed[], hasMore: r.body.data.data.has_more as boolean };
}

/** Reads the page until the cache serves it (the second read remembers it); returns the page as served. */
async function remembered(a: TestAccount, token: string, query: Record<string, string> = {}) {
  const first = await list(a, token, query);
  await list(a, token, query);
  const hits = s.app.conversations.listCacheCounts.hits;
  const served = await list(a, token, query);
  expect(s.app.conversations.listCacheCounts.hits, "the page came from the cache").toBe(hits + 1);
  expect(served).toEqual(first);
  return served;
}

const frame = (a: TestAccount, userId: string): FrameCaller => ({
  kind: "frame",
  accountId: a.accountId,
  chatbotId: a.chatbotId,
  userId,
});
const users = (p: { contacts: Listed[] }) => p.contacts.map((c) => c.user_id);
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe("a remembered contact list page is never served stale", () => {
  it("after a customer's message, here or on another instance", async () => {
    const { a, token, users: u } = await inbox();
    expect(users(await remembered(a, token))).toEqual(["c3", "c2", "c1"]);
    s.clock.advance(5);
    await send(s.url, u[0]!.access, "again", u[0]!.conversationId);
    const here = await list(a, token);
    expect(users(here)).toEqual(["c1", "c3", "c2"]);
    expect(here.contacts[0]!.unread_message_count).toBe("2");
    expect(users(await remembered(a, token))).toEqual(["c1", "c3", "c2"]);
    s.clock.advance(5);
    await other.conversations.messages.send(
      frame(a, "c2"),
      { conversationId: u[1]!.conversationId, content: "me too" },
      AbortSignal.timeout(10_000),
    );
    expect(users(await list(a, token))).toEqual(["c2", "c1", "c3"]);
  });

  it("after an operator's reply and a read marker on another instance (filter=unread)", async () => {
    const { a, token, users: u } = await inbox();
    expect(users(await remembered(a, token, { filter: "unread" }))).toEqual(["c3", "c2", "c1"]);
    await other.conversations.actions.markRead(ownerOf(a), u[2]!.conversationId);
    expect(users(await list(a, token, { filter: "unread" }))).toEqual(["c2", "c1"]);
    expect(users(await remembered(a, token))).toEqual(["c3", "c2", "c1"]);
    s.clock.advance(5);
    await other.conversations.actions.reply(ownerOf(a), u[0]!.conversationId, "an answer");
    const after = await list(a, token);
    expect(users(after)).toEqual(["c1", "c3", "c2"]);
    expect(after.contacts.find((c) => c.user_id === "c3")!.unread_message_count).toBe("0");
  });

  it("after a take-over and a release on another instance (view=mine, assigned_to)", async () => {
    const { a, token, users: u } = await inbox();
    expect(users(await remembered(a, token, { view: "mine" }))).toEqual([]);
    await remembered(a, token);
    await other.conversations.actions.takeOver(ownerOf(a), u[1]!.conversationId, "", "Sam");
    expect(users(await list(a, token, { view: "mine" }))).toEqual(["c2"]);
    expect((await list(a, token)).contacts[1]!.assigned_to).toBe(a.email);
    expect(users(await remembered(a, token, { view: "unassigned" }))).toEqual(["c3", "c1"]);
    await other.conversations.actions.release(ownerOf(a), u[1]!.conversationId);
    expect(users(await list(a, token, { view: "unassigned" }))).toEqual(["c3", "c2", "c1"]);
    expect(users(await list(a, token, { view: "mine" }))).toEqual([]);
  });

  it("after a close and a reopen on another instance (filter=live, conversation_status)", async () => {
    const { a, token, users: u } = await inbox();
    expect(users(await remembered(a, token, { filter: "live" }))).toEqual(["c3", "c2", "c1"]);
    await remembered(a, token);
    await other.conversations.actions.setStatus(ownerOf(a), u[0]!.conversationId, "closed");
    expect(users(await list(a, token, { filter: "live" }))).toEqual(["c3", "c2"]);
    expect((await list(a, token)).contacts[2]!.conversation_status).toBe("closed");
    await remembered(a, token, { filter: "live" });
    await other.conversations.actions.setStatus(ownerOf(a), u[0]!.conversationId, "live");
    expect(users(await list(a, token, { filter: "live" }))).toEqual(["c3", "c2", "c1"]);
  });

  it("after a profile change from get_access_token, here and on another instance (search, names)", async () => {
    const { a, token } = await inbox();
    expect(users(await remembered(a, token, { search: "ada" }))).toEqual([]);
    await remembered(a, token);
    await issueTokens(s.url, a, "c1", { contact_name: "Ada Lovelace" });
    expect(users(await list(a, token, { search: "ada" }))).toEqual(["c1"]);
    expect((await list(a, token)).contacts[2]!.contact_name).toBe("Ada Lovelace");
    expect(users(await remembered(a, token, { search: "grace" }))).toEqual([]);
    await remembered(a, token);
    await other.tokens.access.getAccessToken({
      userId: "c2",
      chatbotId: a.chatbotId,
      clientApiKey: a.apiKey,
      contact: { contactName: "", email: "grace@navy.example", phoneNumber: "" },
    });
    expect(users(await list(a, token, { search: "grace" }))).toEqual(["c2"]);
    expect((await list(a, token)).contacts[1]!.email).toBe("grace@navy.example");
  });

  it("after a chatbot's rename on another instance, which records no event (chatbot_name)", async () => {
    const { a, token } = await inbox();
    expect((await remembered(a, token)).contacts.map((c) => c.chatbot_name)).toEqual([
      "Test bot",
      "Test bot",
      "Test bot",
    ]);
    await other.accounts.updateChatbot(a.email, a.chatbotId, { name: "Returns desk" });
    expect((await list(a, token)).contacts.map((c) => c.chatbot_name)).toEqual([
      "Returns desk",
      "Returns desk",
      "Returns desk",
    ]);
  });

  it("after an erasure on another instance", async () => {
    const { a, token } = await inbox();
    await remembered(a, token);
    await remembered(a, token, { search: "name c2" });
    const erased = await other.privacy.erase(ownerOf(a), { contactId: "", userId: "c2" });
    expect(erased.conversations).toBe(1);
    expect(users(await list(a, token))).toEqual(["c3", "c1"]);
    expect(users(await list(a, token, { search: "name c2" }))).toEqual([]);
  });

  it("after a retention run on another instance", async () => {
    const { a, token, users: u } = await inbox();
    // Closed conversations: the passage of time alone changes nothing on the page, and it stays remembered.
    for (const x of u) await other.conversations.actions.setStatus(ownerOf(a), x.conversationId, "closed");
    const set = await postJson(s.url, `/v1/account/chatbots/${a.chatbotId}/retention`, { days: 30 }, auth(token));
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    s.clock.advance(20 * 86_400_000);
    const fresh = await idToken(s.url, a);
    await other.conversations.messages.send(
      frame(a, "c1"),
      { conversationId: u[0]!.conversationId, content: "still here" },
      AbortSignal.timeout(10_000),
    );
    await other.conversations.actions.setStatus(ownerOf(a), u[0]!.conversationId, "closed");
    expect(users(await remembered(a, fresh))).toEqual(["c1", "c3", "c2"]);
    s.clock.advance(11 * 86_400_000);
    const later = await idToken(s.url, a);
    const hits = s.app.conversations.listCacheCounts.hits;
    expect(users(await list(a, later))).toEqual(["c1", "c3", "c2"]);
    expect(s.app.conversations.listCacheCounts.hits).toBe(hits + 1);
    await other.retention.runOnce();
    expect(users(await list(a, later))).toEqual(["c1"]);
  });

  it("once its live conversations go idle (conversation_status, filter=live)", async () => {
    const { a, token } = await inbox();
    expect(users(await remembered(a, token, { filter: "live" }))).toEqual(["c3", "c2", "c1"]);
    expect((await remembered(a, token)).contacts.map((c) => c.conversation_status)).toEqual(["live", "live", "live"]);
    s.clock.advance(s.app.config.idleCloseSeconds * 1000 + 1);
    const later = await idToken(s.url, a);
    expect(users(await list(a, later, { filter: "live" }))).toEqual([]);
    expect((await list(a, later)).contacts.map((c) => c.conversation_status)).toEqual(["closed", "closed", "closed"]);
  });

  it("is answered to its own account and view only, and alike over JSON and Connect", async () => {
    const { a, token, users: u } = await inbox();
    await other.conversations.actions.takeOver(ownerOf(a), u[0]!.conversationId, "", "Sam");
    const page = await remembered(a, token, { view: "mine" });
    expect(users(page)).toEqual(["c1"]);
    const b = await s.account();
    const foreign = await contacts(s.url, await idToken(s.url, b), a.email, { view: "mine" });
    expect(foreign.status).toBe(403);
    expect(users(await list(b, await idToken(s.url, b), { view: "mine" }))).toEqual([]);
    const { conversations } = rpcClients(s.url, "connect-binary");
    for (let i = 0; i < 3; i++) {
      const r = await conversations.getContactConversations(
        { userEmailId: a.email, view: "mine" },
        { headers: auth(token) },
      );
      expect(r.data?.data?.contacts.map((c) => [c.userId, c.contactId, c.latestMessageTime])).toEqual(
        page.contacts.map((c) => [c.user_id, c.contact_id, c.latest_message_time]),
      );
    }
  });
});
