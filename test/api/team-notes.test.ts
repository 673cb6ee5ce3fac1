import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Internal notes, saved replies and the inbox's views over the JSON routes, on whichever back end the project runs
// (AIAGENT_TEST_BACKEND=postgres: the api-postgres project).

let s: TestServer;
let a: TestAccount;
let other: TestAccount;
let owner: string;
let otherToken: string;
let kim: { email: string; idToken: string };
const receiver = new WebhookReceiver();

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20" } });
  await receiver.up();
  [a, other] = await Promise.all([s.account(), s.account()]);
  [owner, otherToken] = await Promise.all([idToken(s.url, a), idToken(s.url, other)]);
  kim = await addMember(s.url, owner, `kim-${a.accountId.slice(0, 8)}@shop.example`, "operator");
  const ep = await postJson(
    s.url,
    "/v1/account/webhooks",
    { url: receiver.url, event_types: ["note.created"] },
    auth(owner),
  );
  expect(ep.status, JSON.stringify(ep.body)).toBe(200);
});
afterAll(async () => {
  await receiver.down();
  await s?.close(true);
});

async function nextResult(r: NdjsonReader): Promise<any> {
  const line = await r.next();
  if (!line?.result) throw new Error(`expected an event, got ${JSON.stringify(line)}`);
  return line.result;
}

const watch = (q: Record<string, string>) => openNdjson(`${s.url}/watch_conversation?${new URLSearchParams(q)}`, {});

describe("internal notes", () => {
  it("reach every operator's stream, the event log and a webhook, and never the customer", async () => {
    const t = await issueTokens(s.url, a, "note-customer");
    const id = (await send(s.url, t.access_token, "my order is late")).conversation_id;
    const customer = await watch({ conversation_id: id, after_message_order: "2", access_token: t.access_token });
    const operator = await openNdjson(
      `${s.url}/watch_conversation?${new URLSearchParams({ conversation_id: id, after_message_order: "2" })}`,
      auth(kim.idToken),
    );
    const inbox = await openNdjson(
      `${s.url}/watch_account?${new URLSearchParams({ user_email_id: a.email })}`,
      auth(kim.idToken),
    );
    expect((await nextResult(customer)).conversation).toMatchObject({ conversation_id: id });
    expect((await nextResult(operator)).conversation).toMatchObject({ conversation_id: id });
    expect((await nextResult(inbox)).subscribed_at).toBeTruthy();

    const secret = "NOTE-refund-approved-by-finance";
    const added = await postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id: id, content: secret },
      auth(owner),
    );
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.data).toMatchObject({ conversation_id: id, author_email: a.email, content: secret });
    const noteId = added.body.data.note_id;

    // The other operator sees it live, on the conversation and on the inbox stream.
    expect((await nextResult(operator)).note).toMatchObject({ note_id: noteId, content: secret });
    expect((await nextResult(inbox)).note).toMatchObject({ note_id: noteId, content: secret });
    const listed = await getJson(s.url, "/list_conversation_notes", { conversation_id: id }, auth(kim.idToken));
    expect(listed.status).toBe(200);
    expect(listed.body.data.notes.map((n: { content: string }) => n.content)).toEqual([secret]);

    // The customer's stream skips it: the next thing it carries is the operator's reply, which came after the note.
    await postJson(s.url, "/take_over_conversation", { conversation_id: id }, auth(kim.idToken));
    await postJson(s.url, "/reply_to_conversation", { conversation_id: id, content: "On its way." }, auth(kim.idToken));
    const seen: any[] = [];
    for (;;) {
      const ev = await nextResult(customer);
      seen.push(ev);
      if (ev.message) break;
    }
    expect(seen.at(-1).message).toMatchObject({ role: "operator", content: "On its way." });
    expect(JSON.stringify(seen)).not.toContain(secret);
    await Promise.all([customer.cancel(), operator.cancel(), inbox.cancel()]);

    // Nothing the customer can read carries it: its messages, its conversations, a fresh stream, a send's answer.
    const frame = [
      await getJson(s.url, "/get_messages_for_conversation", { conversation_id: id, access_token: t.access_token }),
      await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token }),
      await postJson(s.url, `/ai_agent/send_message?access_token=${t.access_token}`, {
        conversation_id: id,
        content: "thanks",
      }),
    ];
    for (const r of frame) {
      expect(r.status).toBe(200);
      expect(JSON.stringify(r.body)).not.toContain(secret);
    }
    const fresh = await watch({ conversation_id: id, access_token: t.access_token });
    const replay: any[] = [];
    // The state, then the four messages: the customer's, the agent's, the operator's and the customer's thanks.
    for (let i = 0; i < 5; i++) replay.push(await nextResult(fresh));
    expect(replay.at(-1).message).toMatchObject({ message_order: 4, content: "thanks" });
    await fresh.cancel();
    expect(JSON.stringify(replay)).not.toContain(secret);
    // The frame's token opens no note route.
    const byFrame = await getJson(s.url, "/list_conversation_notes", { conversation_id: id }, auth(t.access_token));
    expect(byFrame.status).toBe(401);
    const addByFrame = await postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id: id, content: "x" },
      auth(t.access_token),
    );
    expect(addByFrame.status).toBe(401);

    // The account's event log and its webhook receive it as note.created.
    const log = await getJson(s.url, "/v1/account/events", { types: "note.created" }, auth(owner));
    expect(log.status).toBe(200);
    expect(log.body.data.events).toHaveLength(1);
    expect(log.body.data.events[0]).toMatchObject({ type: "note.created", data: { conversation_id: id } });
    expect(log.body.data.events[0].data.note).toMatchObject({ note_id: noteId, content: secret });
    await eventually("the note delivered", () => receiver.accepted().length >= 1);
    const [hook] = receiver.accepted();
    expect(hook!.event).toMatchObject({ type: "note.created", data: { note: { note_id: noteId, content: secret } } });
  });

  it("another account can neither read nor write a conversation's notes: exactly as an unknown conversation", async () => {
    const t = await issueTokens(s.url, a, "note-bola");
    const id = (await send(s.url, t.access_token, "hello")).conversation_id;
    await postJson(s.url, "/add_conversation_note", { conversation_id: id, content: "ours" }, auth(owner));
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const conversation_id of [id, unknown]) {
      const read = await getJson(s.url, "/list_conversation_notes", { conversation_id }, auth(otherToken));
      const write = await postJson(
        s.url,
        "/add_conversation_note",
        { conversation_id, content: "x" },
        auth(otherToken),
      );
      expect([read.status, write.status]).toEqual([404, 404]);
      expect(read.body.message).toBe("conversation not found");
    }
    const mine = await getJson(s.url, "/list_conversation_notes", { conversation_id: id }, auth(owner));
    expect(mine.body.data.notes.map((n: { content: string }) => n.content)).toEqual(["ours"]);
  });

  it("an empty note is refused naming content, and nothing is stored", async () => {
    const t = await issueTokens(s.url, a, "note-empty");
    const id = (await send(s.url, t.access_token, "hello")).conversation_id;
    const r = await postJson(s.url, "/add_conversation_note", { conversation_id: id, content: "  " }, auth(owner));
    expect(r.status).toBe(400);
    expect(r.body.message).toContain("content");
    const listed = await getJson(s.url, "/list_conversation_notes", { conversation_id: id }, auth(owner));
    expect(listed.body.data.notes).toEqual([]);
  });
});

describe("saved replies", () => {
  it("admins manage them, operators list them, another account sees none of them", async () => {
    const made = await postJson(
      s.url,
      "/v1/account/saved_replies",
      { shortcut: "Refund", content: "Your refund is on its way." },
      auth(owner),
    );
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data).toMatchObject({ shortcut: "refund", content: "Your refund is on its way." });
    const id = made.body.data.saved_reply_id;
    const again = await postJson(s.url, "/v1/account/saved_replies", { shortcut: "refund", content: "x" }, auth(owner));
    expect(again.status).toBe(409);
    const bad = await postJson(
      s.url,
      "/v1/account/saved_replies",
      { shortcut: "no spaces", content: "x" },
      auth(owner),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("shortcut");

    const listed = await getJson(s.url, "/v1/account/saved_replies", {}, auth(kim.idToken));
    expect(listed.status).toBe(200);
    expect(listed.body.data.saved_replies.map((r: { shortcut: string }) => r.shortcut)).toEqual(["refund"]);
    const byOperator = await postJson(
      s.url,
      "/v1/account/saved_replies",
      { shortcut: "x", content: "x" },
      auth(kim.idToken),
    );
    // An operator may not add a shared one (only a personal one).
    expect(byOperator.status).toBe(403);

    expect((await getJson(s.url, "/v1/account/saved_replies", {}, auth(otherToken))).body.data.saved_replies).toEqual(
      [],
    );
    const path = `/v1/account/saved_replies/${id}`;
    const patch = await requestJson(s.url, "PATCH", path, auth(otherToken), { content: "hijacked" });
    const del = await requestJson(s.url, "DELETE", path, auth(otherToken));
    expect([patch.status, del.status]).toEqual([404, 404]);

    const changed = await requestJson(s.url, "PATCH", path, auth(owner), { content: "Refunded today." });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ shortcut: "refund", content: "Refunded today." });
    expect((await requestJson(s.url, "DELETE", path, auth(owner))).status).toBe(200);
    expect((await getJson(s.url, "/v1/account/saved_replies", {}, auth(owner))).body.data.saved_replies).toEqual([]);
  });
});

describe("personal saved replies", () => {
  it("any person keeps their own beside the shared ones; another person's answers 404, and nothing changes", async () => {
    const lee = await addMember(s.url, owner, `lee-${a.accountId.slice(0, 8)}@shop.example`, "operator");
    const save = (token: string, body: Record<string, unknown>) =>
      postJson(s.url, "/v1/account/saved_replies", body, auth(token));
    const shared = await save(owner, { shortcut: "hi", content: "Hello!" });
    expect(shared.status).toBe(200);
    expect(shared.body.data.personal).toBe(false);
    const mine = await save(kim.idToken, {
      shortcut: "hi",
      content: "Hi {{contact.name}}, {{operator.name}} here.",
      personal: true,
    });
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body.data).toMatchObject({ shortcut: "hi", personal: true });
    const twice = await save(kim.idToken, { shortcut: "HI", content: "again", personal: true });
    expect(twice.status).toBe(409);
    expect(twice.body.message).toMatch(/^shortcut: /);
    // Lee may use the same shortcut for their own.
    const lees = await save(lee.idToken, { shortcut: "hi", content: "Lee's", personal: true });
    expect(lees.status).toBe(200);

    const list = async (token: string) =>
      (await getJson(s.url, "/v1/account/saved_replies", {}, auth(token))).body.data.saved_replies.map(
        (r: { content: string; personal: boolean }) => `${r.personal ? "own" : "shared"}:${r.content}`,
      );
    expect(await list(kim.idToken)).toEqual(expect.arrayContaining(["shared:Hello!", `own:${mine.body.data.content}`]));
    expect(await list(kim.idToken)).not.toContain("own:Lee's");
    expect(await list(lee.idToken)).not.toContain(`own:${mine.body.data.content}`);
    expect(await list(owner)).not.toContain(`own:${mine.body.data.content}`);
    expect(await list(otherToken)).toEqual([]);

    // Another person of the account (even an admin) and another account's person: 404, as an unknown id.
    const path = `/v1/account/saved_replies/${mine.body.data.saved_reply_id}`;
    for (const token of [lee.idToken, owner, otherToken]) {
      const patch = await requestJson(s.url, "PATCH", path, auth(token), { content: "hijacked" });
      const del = await requestJson(s.url, "DELETE", path, auth(token));
      expect([patch.status, del.status]).toEqual([404, 404]);
    }
    expect(await list(kim.idToken)).toContain(`own:${mine.body.data.content}`);
    // An operator changes their own, never the shared ones.
    const sharedPath = `/v1/account/saved_replies/${shared.body.data.saved_reply_id}`;
    expect((await requestJson(s.url, "PATCH", sharedPath, auth(kim.idToken), { content: "x" })).status).toBe(403);
    expect((await requestJson(s.url, "DELETE", sharedPath, auth(kim.idToken))).status).toBe(403);
    const changed = await requestJson(s.url, "PATCH", path, auth(kim.idToken), { content: "Bye {{contact.name}}" });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ content: "Bye {{contact.name}}", personal: true });
    expect((await requestJson(s.url, "DELETE", path, auth(kim.idToken))).status).toBe(200);
    for (const token of [owner, lee.idToken]) {
      const r = await requestJson(
        s.url,
        "DELETE",
        `/v1/account/saved_replies/${lees.body.data.saved_reply_id}`,
        auth(token),
      );
      expect(r.status).toBe(token === owner ? 404 : 200);
    }
    await requestJson(s.url, "DELETE", sharedPath, auth(owner));
  });
});

describe("views", () => {
  it("mine lists what the caller holds, unassigned what no person holds, all (the default) every contact", async () => {
    const c = await s.account();
    const admin = await idToken(s.url, c);
    const sam = await addMember(s.url, admin, `sam-${c.accountId.slice(0, 8)}@shop.example`, "operator");
    const held = (await send(s.url, (await issueTokens(s.url, c, "held")).access_token, "hi")).conversation_id;
    await send(s.url, (await issueTokens(s.url, c, "free")).access_token, "hi");
    await postJson(s.url, "/take_over_conversation", { conversation_id: held }, auth(sam.idToken));
    const users = async (token: string, q: Record<string, string>) => {
      const r = await contacts(s.url, token, c.email, q);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data.data.contacts.map((x: { user_id: string }) => x.user_id).sort();
    };
    expect(await users(sam.idToken, {})).toEqual(["free", "held"]);
    expect(await users(sam.idToken, { view: "all" })).toEqual(["free", "held"]);
    expect(await users(sam.idToken, { view: "mine" })).toEqual(["held"]);
    expect(await users(admin, { view: "mine" })).toEqual([]);
    expect(await users(admin, { view: "unassigned" })).toEqual(["free"]);
    expect(await users(sam.idToken, { view: "mine", filter: "unread" })).toEqual(["held"]);
    const bad = await contacts(s.url, admin, c.email, { view: "theirs" });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("view");
  });
});
