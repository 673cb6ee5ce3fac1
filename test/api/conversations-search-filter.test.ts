import { beforeAll, describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";

const fx = serverForFile({ idTokens: true });
const names = (r: { body: { data: { data: { contacts: { contact_name: string }[] } } } }) =>
  r.body.data.data.contacts.map((c) => c.contact_name).sort();

beforeAll(async () => {
  const people = [
    { user: "cust-001", contact_name: "Grace Hopper", email: "grace@navy.example", phone_number: "+1 555 0100" },
    { user: "cust-002", contact_name: "Alan Turing", email: "alan@bletchley.example", phone_number: "+44 555 0200" },
    { user: "cust-003", contact_name: "100% Cotton_Shop", email: "shop@cotton.example", phone_number: "+33 555 0300" },
    { user: "cust-004", contact_name: "Plain Name", email: "plain@example.com", phone_number: "+49 555 0400" },
  ];
  for (const p of people) {
    const t = await issueTokens(fx.s.url, fx.a, p.user, {
      contact_name: p.contact_name,
      email: p.email,
      phone_number: p.phone_number,
    });
    await send(fx.s.url, t.access_token, `hi from ${p.user}`);
  }
});

describe("search", () => {
  it("finds a contact by name, e-mail, phone number and iframe user id, case-insensitively, by substring", async () => {
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "HOPP" }))).toEqual(["Grace Hopper"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "bletchley" }))).toEqual(["Alan Turing"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "555 03" }))).toEqual(["100% Cotton_Shop"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "CUST-004" }))).toEqual(["Plain Name"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "iN" }))).toEqual([
      "Alan Turing",
      "Plain Name",
    ]);
  });

  it("treats % and _ as ordinary characters", async () => {
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "%" }))).toEqual(["100% Cotton_Shop"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "_" }))).toEqual(["100% Cotton_Shop"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "n_S" }))).toEqual(["100% Cotton_Shop"]);
    expect(names(await contacts(fx.s.url, fx.idA, fx.a.email, { search: "a%e" }))).toEqual([]);
  });

  it("an injection attempt returns no contacts and no error", async () => {
    const r = await contacts(fx.s.url, fx.idA, fx.a.email, { search: "' OR 1=1 --" });
    expect(r.status).toBe(200);
    expect(r.body.data.data.contacts).toEqual([]);
    const r2 = await contacts(fx.s.url, fx.idA, fx.a.email, { search: '"); DROP TABLE contacts; --' });
    expect(r2.status).toBe(200);
    expect((await contacts(fx.s.url, fx.idA, fx.a.email)).body.data.data.contacts).toHaveLength(4);
  });
});

describe("filters and the operators' actions", () => {
  it("unread lists a contact after its customer writes, and stops after mark_conversation_read", async () => {
    const b = await fx.s.account();
    const bToken = await idToken(fx.s.url, b);
    const t = await issueTokens(fx.s.url, b, "reader", { contact_name: "Unread Person", email: "", phone_number: "" });
    const sent = await send(fx.s.url, t.access_token, "anyone there?");
    let unread = await contacts(fx.s.url, bToken, b.email, { filter: "unread" });
    expect(unread.body.data.data.contacts.map((c: { unread_message_count: string }) => c.unread_message_count)).toEqual(
      ["1"],
    );
    const mark = await postJson(
      fx.s.url,
      "/mark_conversation_read",
      { conversation_id: sent.conversation_id },
      { authorization: `Bearer ${bToken}` },
    );
    expect(mark.status).toBe(200);
    expect(mark.body.data.conversation_id).toBe(sent.conversation_id);
    unread = await contacts(fx.s.url, bToken, b.email, { filter: "unread" });
    expect(unread.body.data.data.contacts).toEqual([]);
    const all = await contacts(fx.s.url, bToken, b.email, { filter: "all" });
    expect(all.body.data.data.contacts[0].unread_message_count).toBe("0");
    // A new message makes it unread again, counting only what came after the marker.
    await send(fx.s.url, t.access_token, "hello again", sent.conversation_id);
    await send(fx.s.url, t.access_token, "and again", sent.conversation_id);
    unread = await contacts(fx.s.url, bToken, b.email, { filter: "unread" });
    expect(unread.body.data.data.contacts[0].unread_message_count).toBe("2");
  });

  it("mark_conversation_unread counts the latest customer message again, records conversation.unread, and is undone by reading", async () => {
    const b = await fx.s.account();
    const bToken = await idToken(fx.s.url, b);
    const auth = { authorization: `Bearer ${bToken}` };
    const t = await issueTokens(fx.s.url, b, "unreader", { contact_name: "Again Person", email: "", phone_number: "" });
    const sent = await send(fx.s.url, t.access_token, "first question");
    await send(fx.s.url, t.access_token, "second question", sent.conversation_id);
    const count = async () =>
      (await contacts(fx.s.url, bToken, b.email)).body.data.data.contacts[0].unread_message_count as string;
    expect(await count()).toBe("2");
    const body = { conversation_id: sent.conversation_id };
    expect((await postJson(fx.s.url, "/mark_conversation_read", body, auth)).status).toBe(200);
    expect(await count()).toBe("0");
    const unread = await postJson(fx.s.url, "/mark_conversation_unread", body, auth);
    expect(unread.status).toBe(200);
    expect(unread.body.data).toMatchObject({ conversation_id: sent.conversation_id, unread_message_count: "1" });
    expect(await count()).toBe("1");
    expect((await contacts(fx.s.url, bToken, b.email, { filter: "unread" })).body.data.data.contacts).toHaveLength(1);
    // Twice is once.
    expect((await postJson(fx.s.url, "/mark_conversation_unread", body, auth)).body.data.unread_message_count).toBe(
      "1",
    );
    const log = await getJson(fx.s.url, "/v1/account/events", { types: "conversation.unread" }, auth);
    // One event: the second call changed nothing.
    expect(log.body.data.events.map((e: { type: string }) => e.type)).toEqual(["conversation.unread"]);
    expect(log.body.data.events[0].data.conversation.unread_message_count).toBe("1");
    // Bad input changes nothing and names the field.
    const bad = await postJson(fx.s.url, "/mark_conversation_unread", { conversation_id: "nope" }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("conversation_id");
    expect((await postJson(fx.s.url, "/mark_conversation_read", body, auth)).status).toBe(200);
    expect(await count()).toBe("0");
  });

  it("live and closed follow close, reopen, idle time and new user messages; take-over assigns the operator", async () => {
    const b = await fx.s.account();
    let bToken = await idToken(fx.s.url, b);
    const auth = { authorization: `Bearer ${bToken}` };
    const t = await issueTokens(fx.s.url, b, "status-user", {
      contact_name: "Status Person",
      email: "",
      phone_number: "",
    });
    const sent = await send(fx.s.url, t.access_token, "hello");
    const live = () =>
      contacts(fx.s.url, bToken, b.email, { filter: "live" }).then(
        (r) => r.body.data.data.contacts as { conversation_status: string; assigned_to: string }[],
      );
    const first = async () =>
      (await contacts(fx.s.url, bToken, b.email)).body.data.data.contacts[0] as {
        conversation_status: string;
        assigned_to: string;
      };
    expect(await live()).toHaveLength(1);

    const taken = await postJson(fx.s.url, "/take_over_conversation", { conversation_id: sent.conversation_id }, auth);
    expect(taken.status).toBe(200);
    expect(taken.body.data.assigned_to).toBe(b.email);
    expect((await first()).assigned_to).toBe(b.email);
    // With an operator in charge, the agent stays quiet.
    const quiet = await send(fx.s.url, t.access_token, "are you a bot?", sent.conversation_id);
    expect(quiet.reply).toBeUndefined();
    const reply = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: sent.conversation_id, content: "Hi, I'm Sam from support." },
      auth,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.data.role).toBe("operator");
    expect(reply.body.data.message_order).toBe(4);

    const closed = await postJson(fx.s.url, "/close_conversation", { conversation_id: sent.conversation_id }, auth);
    expect(closed.body.data.status).toBe("closed");
    expect(await live()).toEqual([]);
    expect((await first()).conversation_status).toBe("closed");
    const refused = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: sent.conversation_id, content: "hello?" },
      auth,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("failed_precondition");

    const reopened = await postJson(fx.s.url, "/reopen_conversation", { conversation_id: sent.conversation_id }, auth);
    expect(reopened.body.data.status).toBe("live");
    expect(await live()).toHaveLength(1);

    // Idle longer than AIAGENT_IDLE_CLOSE (default one day): reads as closed; a new user message reopens.
    fx.s.clock.advance(86_400_000 + 1000);
    try {
      bToken = await idToken(fx.s.url, b);
      expect(await live()).toEqual([]);
      expect((await first()).conversation_status).toBe("closed");
      const fresh = await issueTokens(fx.s.url, b, "status-user");
      await send(fx.s.url, fresh.access_token, "still there?", sent.conversation_id);
      expect(await live()).toHaveLength(1);
      expect((await first()).conversation_status).toBe("live");
    } finally {
      fx.s.clock.advance(-(86_400_000 + 1000));
    }
  });

  it("operator actions name bad input and change nothing", async () => {
    const auth = { authorization: `Bearer ${fx.idA}` };
    const bad = await postJson(fx.s.url, "/reply_to_conversation", { conversation_id: "nope", content: "x" }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("conversation_id");
    const list = (await contacts(fx.s.url, fx.idA, fx.a.email)).body.data.data.contacts;
    const conv = (
      await fx.s.app.conversations.reads.listFrameConversations({
        kind: "frame",
        accountId: fx.a.accountId,
        chatbotId: fx.a.chatbotId,
        userId: "cust-001",
      })
    )[0]!;
    const empty = await postJson(
      fx.s.url,
      "/reply_to_conversation",
      { conversation_id: conv.conversationId, content: "   " },
      auth,
    );
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain("content");
    const badEmail = await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: conv.conversationId, operator_email: "not an email" },
      auth,
    );
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.message).toContain("operator_email");
    expect((await contacts(fx.s.url, fx.idA, fx.a.email)).body.data.data.contacts).toEqual(list);
  });
});
