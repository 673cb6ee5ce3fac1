import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";
import { discPng } from "../helpers/png.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { settled } from "../knowledge/support.js";
import { dbChecksum } from "./support.js";

// The account API across accounts: two accounts, each with its owner's server token, an admin member and an
// operator member. No principal reads or writes the other account's keys, chatbots, members, sessions or
// conversations: objects that are not the caller's are not_found (or refused by role first), and nothing changes.
// A search of the caller's own knowledge never finds the other account's passages.

/** A word only each account's knowledge holds. */
const CODEWORD = ["zanzibar", "kilimanjaro"];

interface Principal {
  name: string;
  account: number;
  role: "admin" | "operator";
  auth: Record<string, string>;
}
interface Owned {
  apiKeyId: string;
  chatbotId: string;
  memberId: string;
  conversationId: string;
  contactId: string;
  user: string;
  /** A knowledge source of the chatbot. */
  sourceId: string;
  toolId: string;
  /** A team of the account. */
  teamId: string;
}

let s: TestServer;
const accounts: TestAccount[] = [];
const principals: Principal[] = [];
const owned: Owned[] = [];

const req = async (method: string, path: string, auth: Record<string, string>, body?: unknown) => {
  const r = await requestJson(s.url, method, path, auth, body);
  return { ...r, text: JSON.stringify(r.body) };
};

beforeAll(async () => {
  s = await startServer({ overrides: { dispatch: false } });
  for (let i = 0; i < 2; i++) {
    const a = await s.account();
    accounts.push(a);
    const server = await idToken(s.url, a);
    const admin = await addMember(s.url, server, `admin${i}@bola.example`, "admin");
    const operator = await addMember(s.url, server, `operator${i}@bola.example`, "operator");
    principals.push(
      { name: `server of ${i}`, account: i, role: "admin", auth: { authorization: `Bearer ${server}` } },
      { name: `admin of ${i}`, account: i, role: "admin", auth: { authorization: `Bearer ${admin.idToken}` } },
      { name: `operator of ${i}`, account: i, role: "operator", auth: { authorization: `Bearer ${operator.idToken}` } },
    );
    const t = await issueTokens(s.url, a, "same-user");
    const conversationId = (await send(s.url, t.access_token, "hello")).conversation_id;
    const invited = await s.app.team.invite(ownerOf(a), `invited${i}@bola.example`, "operator");
    // A picture to remove: an attempt to remove another account's must find nothing to remove.
    const pic = await requestJson(
      s.url,
      "POST",
      `/v1/account/chatbots/${a.chatbotId}/picture`,
      {
        authorization: `Bearer ${server}`,
      },
      { image: discPng(8).toString("base64") },
    );
    expect(pic.status).toBe(200);
    const source = await requestJson(
      s.url,
      "POST",
      `/v1/account/chatbots/${a.chatbotId}/knowledge_sources`,
      { authorization: `Bearer ${server}` },
      {
        kind: "snippets",
        snippets: [{ title: "Mine", url: "https://shop.example/mine", snippet: `Only mine: ${CODEWORD[i]}.` }],
      },
    );
    expect(source.status).toBe(200);
    // Indexed before the attacks: the background indexing's writes would blur "nothing changes".
    await settled(s.url, server, a.chatbotId, source.body.data.source_id);
    owned.push({
      sourceId: source.body.data.source_id,
      apiKeyId: (await s.app.accounts.listApiKeys(a.email))[0]!.apiKeyId,
      chatbotId: a.chatbotId,
      memberId: invited.member.memberId,
      conversationId,
      contactId: (await s.app.store.privacy.contact(a.accountId, { userId: "same-user" }))!.contactId,
      user: "same-user",
      toolId: (
        await s.app.agentTools.create(ownerOf(a), a.chatbotId, {
          name: "lookup",
          description: "A tool.",
          parameters: "",
          url: "https://tools.example/x",
          method: "",
          timeoutMs: 0,
          requiresApproval: false,
        })
      ).tool.toolId,
      teamId: (
        await s.app.teams.create(ownerOf(a), {
          name: `Team of ${i}`,
          memberIds: [],
          chatbotIds: [],
          assignment: "",
          capacity: 0,
        })
      ).teamId,
    });
  }
});
afterAll(() => s.close(true));

/** Every write or read of one object by id, aimed at `o` (`mine`: the caller's own chatbot). */
function attacks(
  o: Owned,
  mine: Owned,
): { what: string; method: string; path: string; body?: unknown; read?: boolean }[] {
  const sources = `/v1/account/chatbots/${o.chatbotId}/knowledge_sources`;
  return [
    { what: "list knowledge sources", method: "GET", path: sources, read: true },
    { what: "read knowledge source", method: "GET", path: `${sources}/${o.sourceId}`, read: true },
    {
      what: "read knowledge source through my chatbot",
      method: "GET",
      path: `/v1/account/chatbots/${mine.chatbotId}/knowledge_sources/${o.sourceId}`,
      read: true,
    },
    { what: "delete knowledge source", method: "DELETE", path: `${sources}/${o.sourceId}` },
    {
      what: "delete knowledge source through my chatbot",
      method: "DELETE",
      path: `/v1/account/chatbots/${mine.chatbotId}/knowledge_sources/${o.sourceId}`,
    },
    { what: "resync knowledge source", method: "POST", path: `${sources}/${o.sourceId}/resync`, body: {} },
    {
      what: "schedule knowledge source",
      method: "PATCH",
      path: `${sources}/${o.sourceId}`,
      body: { resync_interval_hours: 0 },
    },
    {
      what: "schedule knowledge source through my chatbot",
      method: "PATCH",
      path: `/v1/account/chatbots/${mine.chatbotId}/knowledge_sources/${o.sourceId}`,
      body: { resync_interval_hours: 0 },
    },
    {
      what: "add knowledge source",
      method: "POST",
      path: sources,
      body: { kind: "snippets", snippets: [{ title: "x", url: "https://x.example/", snippet: "pwned" }] },
    },
    {
      what: "search knowledge",
      method: "GET",
      path: `/v1/account/chatbots/${o.chatbotId}/knowledge/search?query=${CODEWORD.join("+")}`,
      read: true,
    },
    { what: "read chatbot", method: "GET", path: `/v1/account/chatbots/${o.chatbotId}` },
    { what: "update chatbot", method: "PATCH", path: `/v1/account/chatbots/${o.chatbotId}`, body: { name: "pwned" } },
    { what: "disable chatbot", method: "POST", path: `/v1/account/chatbots/${o.chatbotId}/disable`, body: {} },
    { what: "revoke key", method: "POST", path: `/v1/account/api_keys/${o.apiKeyId}/revoke`, body: {} },
    { what: "change role", method: "PATCH", path: `/v1/account/members/${o.memberId}`, body: { role: "admin" } },
    { what: "remove member", method: "DELETE", path: `/v1/account/members/${o.memberId}` },
    {
      what: "reset password",
      method: "POST",
      path: `/v1/account/members/${o.memberId}/password_reset`,
      body: {},
    },
    { what: "revoke sessions", method: "POST", path: "/v1/account/sessions/revoke", body: { chatbot_id: o.chatbotId } },
    { what: "erase contact", method: "POST", path: "/v1/account/contacts/erase", body: { contact_id: o.contactId } },
    { what: "export contact", method: "GET", path: `/v1/account/contacts/export?contact_id=${o.contactId}` },
    { what: "preview token", method: "POST", path: `/v1/account/chatbots/${o.chatbotId}/preview` },
    { what: "set retention", method: "POST", path: `/v1/account/chatbots/${o.chatbotId}/retention`, body: { days: 1 } },
    {
      what: "set agent picture",
      method: "POST",
      path: `/v1/account/chatbots/${o.chatbotId}/picture`,
      body: { image: discPng(8).toString("base64") },
    },
    { what: "remove agent picture", method: "POST", path: `/v1/account/chatbots/${o.chatbotId}/picture`, body: {} },
    { what: "list tools", method: "GET", path: `/v1/account/chatbots/${o.chatbotId}/tools` },
    {
      what: "add tool",
      method: "POST",
      path: `/v1/account/chatbots/${o.chatbotId}/tools`,
      body: { name: "evil", description: "x", url: "https://evil.example/x" },
    },
    {
      what: "change tool",
      method: "PATCH",
      path: `/v1/account/chatbots/${o.chatbotId}/tools/${o.toolId}`,
      body: { url: "https://evil.example/x", rotate_secret: true },
    },
    { what: "delete tool", method: "DELETE", path: `/v1/account/chatbots/${o.chatbotId}/tools/${o.toolId}` },
    { what: "read agent settings", method: "GET", path: `/v1/account/chatbots/${o.chatbotId}/agent_settings` },
    {
      what: "change agent settings",
      method: "PATCH",
      path: `/v1/account/chatbots/${o.chatbotId}/agent_settings`,
      body: { instructions: "Tell everyone the shop is closed." },
    },
    { what: "read agent draft", method: "GET", path: `/v1/account/chatbots/${o.chatbotId}/agent_draft` },
    {
      what: "write agent draft",
      method: "PATCH",
      path: `/v1/account/chatbots/${o.chatbotId}/agent_draft`,
      body: { instructions: "Tell everyone the shop is closed." },
    },
    { what: "drop agent draft", method: "DELETE", path: `/v1/account/chatbots/${o.chatbotId}/agent_draft` },
    {
      what: "publish agent draft",
      method: "POST",
      path: `/v1/account/chatbots/${o.chatbotId}/agent_draft:publish`,
      body: {},
    },
    {
      what: "add a source to the agent draft",
      method: "POST",
      path: `/v1/account/chatbots/${o.chatbotId}/agent_draft/sources`,
      body: { kind: "snippets", snippets: [{ title: "x", url: "https://x.example/", snippet: "Closed." }] },
    },
    {
      what: "replay agent draft",
      method: "POST",
      path: `/v1/account/chatbots/${o.chatbotId}/agent_draft:replay`,
      body: { last_conversations: 5 },
    },
    { what: "list tool approvals", method: "GET", path: `/list_tool_approvals?conversation_id=${o.conversationId}` },
    {
      what: "approve a tool call",
      method: "POST",
      path: "/decide_tool_approval",
      body: { conversation_id: o.conversationId, call_id: "call_1", decision: "approve" },
    },
    { what: "rename team", method: "PATCH", path: `/v1/account/teams/${o.teamId}`, body: { name: "pwned" } },
    {
      what: "set team members",
      method: "POST",
      path: `/v1/account/teams/${o.teamId}/members`,
      body: { member_ids: [] },
    },
    {
      what: "give team chatbots",
      method: "POST",
      path: `/v1/account/teams/${o.teamId}/chatbots`,
      body: { chatbot_ids: [o.chatbotId] },
    },
    { what: "delete team", method: "DELETE", path: `/v1/account/teams/${o.teamId}` },
    { what: "take over", method: "POST", path: "/take_over_conversation", body: { conversation_id: o.conversationId } },
    { what: "close", method: "POST", path: "/close_conversation", body: { conversation_id: o.conversationId } },
    {
      what: "snooze",
      method: "POST",
      path: "/snooze_conversation",
      body: { conversation_id: o.conversationId, snoozed_until: new Date(Date.now() + 3_600_000).toISOString() },
    },

    {
      what: "read messages",
      method: "GET",
      path: `/get_messages_for_conversation?conversation_id=${o.conversationId}`,
    },
  ];
}

describe("the account API across accounts", () => {
  it("no principal reaches another account's objects; nothing changes", async () => {
    const db = sqliteDb(s.app);
    for (const p of principals) {
      const target = owned[1 - p.account]!;
      for (const at of attacks(target, owned[p.account]!)) {
        const before = dbChecksum(db);
        const r = await req(at.method, at.path, p.auth, at.body);
        const inboxAction =
          at.path.startsWith("/take_over") ||
          at.path.startsWith("/close") ||
          at.path.startsWith("/snooze") ||
          at.path.startsWith("/get_") ||
          at.path.includes("_tool_approval");
        // An operator is refused admin RPCs by role before any lookup; everything else is not_found.
        const expected = p.role === "operator" && !inboxAction && !at.read ? 403 : 404;
        expect(r.status, `${p.name}: ${at.what} → ${r.text}`).toBe(expected);
        expect(dbChecksum(db), `${p.name}: ${at.what} wrote`).toBe(before);
      }
    }
  });

  it("an idempotency key used by one account replays nothing to another: the same key and body are not_found", async () => {
    const db = sqliteDb(s.app);
    const key = "shared-key-0001";
    const [owner0] = principals;
    const body = { conversation_id: owned[0]!.conversationId, content: "mine" };
    const first = await req("POST", "/reply_to_conversation", { ...owner0!.auth, "idempotency-key": key }, body);
    expect(first.status).toBe(200);
    for (const p of principals.filter((x) => x.account === 1)) {
      const before = dbChecksum(db);
      const r = await req("POST", "/reply_to_conversation", { ...p.auth, "idempotency-key": key }, body);
      expect(r.status, `${p.name} replayed ${r.text}`).toBe(404);
      expect(r.text).not.toContain(first.body.data.message_id);
      expect(dbChecksum(db), `${p.name} wrote`).toBe(before);
    }
  });

  it("lists show only the caller's own account", async () => {
    for (const p of principals.filter((x) => x.role === "admin")) {
      const other = owned[1 - p.account]!;
      const otherAccount = accounts[1 - p.account]!;
      for (const path of [
        "/v1/account/chatbots",
        "/v1/account/api_keys",
        "/v1/account/members",
        "/v1/account",
        "/v1/account/audit_events",
        "/v1/account/teams",
        "/v1/account/reports/operators?from=2026-01-01&to=2026-12-31",
      ]) {
        const r = await req("GET", path, p.auth);
        expect(r.status, `${p.name} ${path}`).toBe(200);
        for (const leak of [
          other.teamId,
          other.chatbotId,
          other.apiKeyId,
          other.memberId,
          otherAccount.email,
          otherAccount.accountId,
        ])
          expect(r.text, `${p.name} ${path} shows the other account`).not.toContain(leak);
      }
    }
  });

  it("mentions and personal saved replies stay in their account and with their person; nothing changes", async () => {
    const db = sqliteDb(s.app);
    const people = async (p: Principal) =>
      ((await req("GET", "/v1/account/people", p.auth)).body.data.people as { member_id: string }[]).map(
        (x) => x.member_id,
      );
    // Each operator keeps a personal saved reply.
    const personal: string[] = [];
    for (const p of principals.filter((x) => x.role === "operator")) {
      const r = await req("POST", "/v1/account/saved_replies", p.auth, {
        shortcut: "mine",
        content: "Hi {{contact.name}}",
        personal: true,
      });
      expect(r.status, r.text).toBe(200);
      personal[p.account] = r.body.data.saved_reply_id;
    }
    for (const p of principals) {
      const otherPeople = await people(principals.find((x) => x.account !== p.account)!);
      expect(await people(p)).not.toContain(otherPeople[1]);
      const before = dbChecksum(db);
      // A note of my own conversation mentioning the other account's people: refused naming the field.
      const note = await req("POST", "/add_conversation_note", p.auth, {
        conversation_id: owned[p.account]!.conversationId,
        content: "@someone look",
        mention_member_ids: [otherPeople[1]],
      });
      expect(note.status, `${p.name}: ${note.text}`).toBe(400);
      expect(note.body.message).toMatch(/^mention_member_ids: /);
      // Another person's personal saved reply (of either account) answers as an unknown id.
      for (const i of [0, 1]) {
        if (p.role === "operator" && p.account === i) continue;
        const path = `/v1/account/saved_replies/${personal[i]}`;
        expect((await req("PATCH", path, p.auth, { content: "taken" })).status, `${p.name} patch ${i}`).toBe(404);
        expect((await req("DELETE", path, p.auth)).status, `${p.name} delete ${i}`).toBe(404);
        const listed = await req("GET", "/v1/account/saved_replies", p.auth);
        expect(listed.text, `${p.name} lists ${i}'s`).not.toContain(personal[i]!);
      }
      expect(dbChecksum(db), `${p.name} wrote`).toBe(before);
    }
  });

  it("a search naming another account's words finds nothing of it, by any filter", async () => {
    for (const p of principals) {
      const mine = owned[p.account]!;
      const other = owned[1 - p.account]!;
      // Both accounts' customers wrote "hello" as the same user: only the caller's own conversation is found.
      for (const q of <Record<string, string>[]>[
        { query: "hello" },
        { query: "hello", chatbot_id: other.chatbotId },
        { query: "hello same", operator: "ai_agent" },
        { query: "pwned" },
      ]) {
        const r = await req("GET", `/search_conversations?${new URLSearchParams(q)}`, p.auth);
        expect(r.status, `${p.name} ${JSON.stringify(q)}`).toBe(200);
        expect(r.text, `${p.name} ${JSON.stringify(q)} shows the other account`).not.toContain(other.conversationId);
        expect(r.text).not.toContain(other.contactId);
      }
      const own = await req("GET", "/search_conversations?query=hello", p.auth);
      expect(own.text, p.name).toContain(mine.conversationId);
    }
  });

  it("a display name and picture are the caller's own: no one else's account shows them", async () => {
    for (const p of principals) {
      const r = await req("POST", "/v1/account/profile", p.auth, {
        display_name: `name of ${p.name}`,
        avatar_url: `https://cdn.example/${encodeURIComponent(p.name)}.png`,
      });
      expect(r.status, `${p.name}: ${r.text}`).toBe(200);
    }
    for (const p of principals) {
      const r = await req("GET", "/v1/account", p.auth);
      expect(r.status).toBe(200);
      const data = JSON.parse(r.text).data;
      expect(data.caller_display_name).toBe(`name of ${p.name}`);
      for (const other of principals.filter((x) => x !== p)) expect(r.text).not.toContain(`name of ${other.name}"`);
    }
  });

  it("a search of my own knowledge naming the other account's words finds nothing of it", async () => {
    for (const p of principals) {
      const mine = owned[p.account]!;
      const other = owned[1 - p.account]!;
      const search = (q: string) =>
        req("GET", `/v1/account/chatbots/${mine.chatbotId}/knowledge/search?query=${q}`, p.auth);
      const theirs = await search(`only mine ${CODEWORD[1 - p.account]}`);
      expect(theirs.status, `${p.name}: ${theirs.text}`).toBe(200);
      expect(theirs.text).not.toContain(other.sourceId);
      expect(theirs.text).not.toContain(CODEWORD[1 - p.account]!);
      expect(theirs.body.data.passages.every((x: { source_id: string }) => x.source_id === mine.sourceId)).toBe(true);
      // The caller's own passage is found by its own word.
      const own = await search(CODEWORD[p.account]!);
      expect(own.body.data).toMatchObject({ answers: true, passages: [{ source_id: mine.sourceId }] });
    }
  });

  it("the same objects are reachable by their own account's principals", async () => {
    for (const p of principals.filter((x) => x.role === "admin")) {
      const mine = owned[p.account]!;
      expect((await req("GET", `/v1/account/chatbots/${mine.chatbotId}`, p.auth)).status).toBe(200);
      const exported = await req("GET", `/v1/account/contacts/export?contact_id=${mine.contactId}`, p.auth);
      expect(exported.status, p.name).toBe(200);
    }
    for (const p of principals.filter((x) => x.role === "operator")) {
      const mine = owned[p.account]!;
      const r = await req("GET", `/get_messages_for_conversation?conversation_id=${mine.conversationId}`, p.auth);
      expect(r.status, p.name).toBe(200);
    }
  });
});
