import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, contacts, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";

const fx = serverForFile({ accounts: 2, idTokens: true });
let contactId: string;
let first: string;
let second: string;

beforeAll(async () => {
  const t = await issueTokens(fx.s.url, fx.a, "cust-1", { contact_name: "Ada Lovelace" });
  first = (await send(fx.s.url, t.access_token, "first question")).conversation_id;
  fx.s.clock.advance(1000);
  second = (await send(fx.s.url, t.access_token, "second question")).conversation_id;
  await send(fx.s.url, t.access_token, "and more", second);
  const list = await contacts(fx.s.url, fx.idA, fx.a.email);
  contactId = list.body.data.data.contacts[0].contact_id;
});

describe("from a contact to its conversations", () => {
  test("each contact carries its latest conversation id beside the documented fields", async () => {
    const r = await contacts(fx.s.url, fx.idA, fx.a.email);
    expect(r.status).toBe(200);
    const c = r.body.data.data.contacts[0];
    expect(c.latest_conversation_id).toBe(second);
    // The documented fields are all still there, with their documented types.
    for (const k of ["contact_id", "contact_name", "phone_number", "email", "conversation_status", "assigned_to"])
      expect(typeof c[k]).toBe("string");
    expect(c.unread_message_count).toBe("3");
    expect(c.channels).toEqual(["web"]);
  });

  test("GET /get_conversations_for_contact lists the contact's conversations newest first, with unread counts", async () => {
    const r = await getJson(
      fx.s.url,
      "/get_conversations_for_contact",
      { contact_id: contactId },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(r.status).toBe(200);
    const list = r.body.data.conversations;
    expect(list.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([second, first]);
    expect(list[0]).toMatchObject({
      status: "live",
      assigned_to: "ai_agent",
      channel: "web",
      unread_message_count: "2",
    });
    expect(list[1].unread_message_count).toBe("1");
    expect(list[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(list[0].latest_message_time).toMatch(/Z$/);
    expect(r.body.data.has_more).toBe(false);

    // Paged: one per page, has_more says whether to ask again.
    const p1 = await getJson(
      fx.s.url,
      "/get_conversations_for_contact",
      { contact_id: contactId, limit: 1 },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(p1.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([second]);
    expect(p1.body.data.has_more).toBe(true);
    const p2 = await getJson(
      fx.s.url,
      "/get_conversations_for_contact",
      { contact_id: contactId, limit: 1, offset: 1 },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(p2.body.data.conversations.map((c: { conversation_id: string }) => c.conversation_id)).toEqual([first]);
    expect(p2.body.data.has_more).toBe(false);

    // The listed id opens the messages.
    const m = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: second },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(m.body.messages.map((x: { content: string }) => x.content).slice(0, 1)).toEqual(["second question"]);
  });

  test.each(["connect-json", "connect-binary", "grpc", "grpc-web"] as const)(
    "the same list over %s, and the same refusals",
    async (protocol) => {
      const { conversations } = rpcClients(fx.s.url, protocol);
      const headers = { authorization: `Bearer ${fx.idA}` };
      const r = await conversations.getConversationsForContact({ contactId }, { headers });
      expect(r.data?.conversations.map((c) => c.conversationId)).toEqual([second, first]);
      expect(r.data?.conversations[0]?.unreadMessageCount).toBe("2");
      expect(r.data?.hasMore).toBe(false);

      // Another account's contact is not found, exactly like one that does not exist.
      const other = await conversations
        .getConversationsForContact({ contactId }, { headers: { authorization: `Bearer ${fx.idB}` } })
        .catch((e: unknown) => ConnectError.from(e));
      expect(other).toBeInstanceOf(ConnectError);
      expect((other as ConnectError).code).toBe(Code.NotFound);
      const none = await conversations
        .getConversationsForContact({ contactId: crypto.randomUUID() }, { headers })
        .catch((e: unknown) => ConnectError.from(e));
      expect((none as ConnectError).code).toBe(Code.NotFound);
      expect((none as ConnectError).rawMessage).toBe((other as ConnectError).rawMessage);
    },
  );

  test("BOLA and bad input on the JSON route", async () => {
    const route = "/get_conversations_for_contact";
    const otherAccount = await getJson(
      fx.s.url,
      route,
      { contact_id: contactId },
      { authorization: `Bearer ${fx.idB}` },
    );
    const unknown = await getJson(
      fx.s.url,
      route,
      { contact_id: crypto.randomUUID() },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(otherAccount.status).toBe(404);
    expect(otherAccount.body).toEqual(unknown.body);

    // A frame's access token is not an ID token.
    const t = await issueTokens(fx.s.url, fx.a, "cust-1");
    const frame = await getJson(
      fx.s.url,
      route,
      { contact_id: contactId },
      { authorization: `Bearer ${t.access_token}` },
    );
    expect(frame.status).toBe(401);
    const anonymous = await getJson(fx.s.url, route, { contact_id: contactId });
    expect(anonymous.status).toBe(401);

    for (const [q, field] of [
      [{ contact_id: "nope" }, "contact_id"],
      [{}, "contact_id"],
      [{ contact_id: contactId, limit: 0 }, "limit"],
      [{ contact_id: contactId, limit: 101 }, "limit"],
      [{ contact_id: contactId, offset: -1 }, "offset"],
    ] as const) {
      const r = await getJson(fx.s.url, route, q, { authorization: `Bearer ${fx.idA}` });
      expect(r.status, JSON.stringify(q)).toBe(400);
      expect(r.body.message).toContain(field);
    }
  });

  test("take over with a display name, release back to the AI agent: both accounts' rules hold", async () => {
    const auth = { authorization: `Bearer ${fx.idA}` };
    const taken = await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: second, operator_name: "Sam" },
      auth,
    );
    expect(taken.status).toBe(200);
    expect(taken.body.data).toMatchObject({ assigned_to: fx.a.email, operator_name: "Sam" });

    // Without a name, the customer sees the local part of the operator's e-mail (a person of the account).
    await addMember(fx.s.url, fx.idA, "kim.lee@acme.example");
    const byMail = await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: first, operator_email: "kim.lee@acme.example" },
      auth,
    );
    expect(byMail.body.data).toMatchObject({ assigned_to: "kim.lee@acme.example", operator_name: "kim.lee" });

    const badName = await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: first, operator_name: "x".repeat(81) },
      auth,
    );
    expect(badName.status).toBe(400);
    expect(badName.body.message).toContain("operator_name");

    // Another account can neither release nor see the conversation.
    const foreign = await postJson(
      fx.s.url,
      "/release_conversation",
      { conversation_id: second },
      { authorization: `Bearer ${fx.idB}` },
    );
    expect(foreign.status).toBe(404);
    const stillHeld = await getJson(
      fx.s.url,
      "/get_conversations_for_contact",
      { contact_id: contactId },
      { authorization: `Bearer ${fx.idA}` },
    );
    expect(stillHeld.body.data.conversations[0]).toMatchObject({ assigned_to: fx.a.email, operator_name: "Sam" });

    const released = await postJson(fx.s.url, "/release_conversation", { conversation_id: second }, auth);
    expect(released.status).toBe(200);
    expect(released.body.data).toMatchObject({ assigned_to: "ai_agent", operator_name: "" });

    // Over gRPC too.
    const { conversations } = rpcClients(fx.s.url, "grpc");
    const g = await conversations.releaseConversation({ conversationId: first }, { headers: auth });
    expect(g.data?.assignedTo).toBe("ai_agent");

    // Released: the AI agent answers the customer again.
    const t = await issueTokens(fx.s.url, fx.a, "cust-1");
    const answer = await send(fx.s.url, t.access_token, "hello again", second);
    expect(answer.reply?.role).toBe("assistant");
  });
});
