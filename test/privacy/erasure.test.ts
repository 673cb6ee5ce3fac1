import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findAnywhere, tableNames } from "../helpers/every-row.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Erasure and export of one customer (GDPR Art. 17, 15/20), on whichever back end the project runs
// (AIAGENT_TEST_BACKEND=postgres: the api-postgres project).

let s: TestServer;
beforeAll(async () => {
  // Deliveries to an address nobody answers stay pending: their payloads must lose the customer too.
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "3600000" } });
});
afterAll(async () => {
  await s.close(true);
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** A customer with strings found nowhere else: their id, profile and what they wrote. */
function customer() {
  const tag = Math.random().toString(36).slice(2, 10);
  const digits = String(Math.random()).slice(2, 11);
  return {
    userId: `cust-${tag}`,
    contact: { contact_name: `Quorra ${tag}`, email: `quorra.${tag}@mail.example`, phone_number: `+4420${digits}` },
    words: [`parcel-${tag}`, `address-${tag}`],
  };
}

/** The customer's strings: none of them may remain anywhere after the erasure. */
const needles = (c: ReturnType<typeof customer>) => [
  c.userId,
  c.contact.contact_name,
  c.contact.email,
  c.contact.phone_number,
  ...c.words,
];

/** A customer with two conversations, a revoked session, pending webhook deliveries and cached pages. */
async function populate(a: TestAccount, token: string, c: ReturnType<typeof customer>) {
  const t = await issueTokens(s.url, a, c.userId, c.contact);
  const first = (await send(s.url, t.access_token, `where is my ${c.words[0]}?`)).conversation_id;
  await send(s.url, t.access_token, `my ${c.words[1]} changed`, first);
  const second = (await send(s.url, t.access_token, `hello again, ${c.contact.contact_name}`)).conversation_id;
  // Keyed writes keep their first answer for a day: the customer's own, and an operator's reply to them.
  const keyed = await postJson(s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`, {
    content: `keyed ${c.words[0]}`,
    conversation_id: second,
    idempotency_key: `frame-${c.userId}`,
  });
  expect(keyed.status, JSON.stringify(keyed.body)).toBe(200);
  const takeOver = await postJson(s.url, "/take_over_conversation", { conversation_id: second }, auth(token));
  expect(takeOver.status, JSON.stringify(takeOver.body)).toBe(200);
  const reply = await postJson(
    s.url,
    "/reply_to_conversation",
    { conversation_id: second, content: `about your ${c.words[1]}`, idempotency_key: `op-${c.userId}` },
    auth(token),
  );
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  // A rating whose comment is in the customer's words.
  expect((await postJson(s.url, "/close_conversation", { conversation_id: first }, auth(token))).status).toBe(200);
  const rated = await postJson(
    s.url,
    `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`,
    {
      conversation_id: first,
      score: 2,
      comment: `the ${c.words[0]} came late`,
    },
  );
  expect(rated.status, JSON.stringify(rated.body)).toBe(200);
  // An internal note about them (keyed: its first answer is kept for a day too).
  const note = await postJson(
    s.url,
    "/add_conversation_note",
    {
      conversation_id: second,
      content: `${c.contact.contact_name} wants the ${c.words[0]} refunded`,
      idempotency_key: `note-${c.userId}`,
    },
    auth(token),
  );
  expect(note.status, JSON.stringify(note.body)).toBe(200);
  expect((await postJson(s.url, "/v1/account/sessions/revoke", { user_id: c.userId }, auth(token))).status).toBe(200);
  await issueTokens(s.url, a, c.userId, c.contact);
  // Read the pages twice: the second read remembers them in the page cache.
  for (let i = 0; i < 2; i++)
    for (const conversation_id of [first, second]) {
      const r = await getJson(s.url, "/get_messages_for_conversation", { conversation_id, limit: 1 }, auth(token));
      expect(r.status).toBe(200);
    }
  return { first, second };
}

async function contactId(token: string, a: TestAccount, userId: string): Promise<string> {
  const r = await getJson(s.url, "/get_contact_conversations", { user_email_id: a.email, search: userId }, auth(token));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const [contact] = r.body.data.data.contacts as { contact_id: string; user_id: string }[];
  expect(contact?.user_id).toBe(userId);
  return contact!.contact_id;
}

describe("erasing a contact", () => {
  it("leaves no row, event payload, pending webhook payload or cached page with the customer's data", async () => {
    const a = await s.account();
    const token = await idToken(s.url, a);
    const hook = await postJson(s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/hooks" }, auth(token));
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    const gone = customer();
    const kept = customer();
    const { first } = await populate(a, token, gone);
    await populate(a, token, kept);
    // Before: the strings are there (the search below can find them), the deliveries are pending.
    expect((await findAnywhere(s.app, needles(gone))).length).toBeGreaterThan(5);
    const id = await contactId(token, a, gone.userId);
    // Read twice more: the contact list cache remembers the page that lists them.
    await contactId(token, a, gone.userId);
    await contactId(token, a, gone.userId);

    const r = await postJson(s.url, "/v1/account/contacts/erase", { user_id: gone.userId }, auth(token));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Three sends and their replies, a keyed send and its reply, and an operator's reply.
    expect(r.body.data).toMatchObject({ contact_id: id, conversations: 2, messages: 9, sessions: 2 });

    expect(await findAnywhere(s.app, needles(gone))).toEqual([]);
    // The search looked at every table, this one's included.
    expect(await tableNames(s.app)).toEqual(
      expect.arrayContaining([
        "contacts",
        "messages",
        "conversation_notes",
        "events",
        "audit_events",
        "idempotency_keys",
      ]),
    );
    // The other customer is untouched.
    expect((await findAnywhere(s.app, needles(kept))).length).toBeGreaterThan(5);

    // A contact list page the cache remembered is not served again, and no page is kept (in memory) any more.
    const listed = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email, search: gone.userId },
      auth(token),
    );
    expect(listed.body.data.data.contacts).toEqual([]);
    // A page the cache remembered is not served again.
    const page = await getJson(
      s.url,
      "/get_messages_for_conversation",
      { conversation_id: first, limit: 1 },
      auth(token),
    );
    expect(page.status).toBe(404);
    // The event log says it happened, with ids only; the erased customer's events are redacted.
    const events = (await getJson(s.url, "/v1/account/events", { limit: 1000 }, auth(token))).body.data.events as any[];
    const erased = events.filter((e) => e.type === "contact.erased");
    expect(erased).toHaveLength(1);
    expect(erased[0].data.contact_id).toBe(id);
    expect(events.filter((e) => e.data.redacted).length).toBeGreaterThan(5);
    // Pending deliveries (made from the events when sent) carry nothing of the customer.
    const pending = await s.app.store.webhooks.claim(
      s.clock.now() + 86_400_000,
      s.clock.now() + 86_400_000,
      1000,
      1000,
    );
    expect(pending.length).toBeGreaterThan(0);
    const bodies = JSON.stringify(pending.map((p) => p.event)).toLowerCase();
    for (const n of needles(gone)) expect(bodies).not.toContain(n.toLowerCase());

    // Erased once: a second erasure finds nothing.
    const again = await postJson(s.url, "/v1/account/contacts/erase", { contact_id: id }, auth(token));
    expect(again.status).toBe(404);
  });

  it("keeps the erased customer's access tokens refused: no read, no write, no contact recreated (issue 47)", async () => {
    const a = await s.account();
    const token = await idToken(s.url, a);
    const c = customer();
    const t = await issueTokens(s.url, a, c.userId, c.contact);
    const conv = (await send(s.url, t.access_token, "hello")).conversation_id as string;
    // Revoked (by user) before the erasure, and a second session that was never revoked: both must stay dead.
    const live = await issueTokens(s.url, a, c.userId, c.contact);
    expect((await postJson(s.url, "/v1/account/sessions/revoke", { user_id: c.userId }, auth(token))).status).toBe(200);
    const after = await issueTokens(s.url, a, c.userId, c.contact);
    const r = await postJson(s.url, "/v1/account/contacts/erase", { user_id: c.userId }, auth(token));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    for (const at of [t.access_token, live.access_token, after.access_token]) {
      const read = await getJson(s.url, "/ai_agent/conversations", { access_token: at });
      expect(read.status).toBe(401);
      expect(read.body.details[0].debug.reason).toBe("TokenRevokedError");
      const write = await postJson(s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(at)}`, {
        content: "am I back?",
      });
      expect(write.status).toBe(401);
    }
    const listed = await getJson(
      s.url,
      "/get_contact_conversations",
      { user_email_id: a.email, search: c.userId },
      auth(token),
    );
    expect(listed.body.data.data.contacts).toEqual([]);
    expect(
      (await getJson(s.url, "/get_messages_for_conversation", { conversation_id: conv }, auth(token))).status,
    ).toBe(404);
    // Nothing of the customer is kept to do it.
    expect(await findAnywhere(s.app, needles(c))).toEqual([]);
    // The same user_id, asked for anew by the client's server, starts afresh.
    const fresh = await issueTokens(s.url, a, c.userId);
    expect((await getJson(s.url, "/ai_agent/conversations", { access_token: fresh.access_token })).status).toBe(200);
  });

  it("is refused for another account's contact, which stays whole", async () => {
    const a = await s.account();
    const b = await s.account();
    const c = customer();
    const tokenA = await idToken(s.url, a);
    await populate(a, tokenA, c);
    const id = await contactId(tokenA, a, c.userId);
    const tokenB = await idToken(s.url, b);
    for (const body of [{ contact_id: id }, { user_id: c.userId }] as Record<string, string>[]) {
      const r = await postJson(s.url, "/v1/account/contacts/erase", body, auth(tokenB));
      expect(r.status).toBe(404);
      const x = await getJson(s.url, "/v1/account/contacts/export", body, auth(tokenB));
      expect(x.status).toBe(404);
    }
    expect((await findAnywhere(s.app, [c.words[0]!])).length).toBeGreaterThan(0);
  });

  it("names the field when the request is wrong, and changes nothing", async () => {
    const a = await s.account();
    const token = await idToken(s.url, a);
    for (const [body, field] of [
      [{}, "contact_id"],
      [{ contact_id: "not-a-uuid" }, "contact_id"],
      [{ contact_id: "6f1c7c52-2a63-4d2c-9d1e-0a6f2b1d9e11", user_id: "x" }, "contact_id"],
      [{ user_id: "x".repeat(300) }, "user_id"],
    ] as const) {
      const r = await postJson(s.url, "/v1/account/contacts/erase", body, auth(token));
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
  });
});

describe("exporting a contact", () => {
  it("answers the contact, every conversation with every message, and the sessions as one document", async () => {
    const a = await s.account();
    const token = await idToken(s.url, a);
    const c = customer();
    const { first, second } = await populate(a, token, c);
    const id = await contactId(token, a, c.userId);
    const r = await getJson(s.url, "/v1/account/contacts/export", { contact_id: id }, auth(token));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const doc = r.body.data;
    expect(doc.contact).toEqual({ contact_id: id, user_id: c.userId, ...c.contact });
    expect(doc.conversations.map((v: any) => v.conversation_id)).toEqual([first, second]);
    const texts = doc.conversations.flatMap((v: any) => v.messages.map((m: any) => m.content)).join("\n");
    for (const w of c.words) expect(texts).toContain(w);
    expect(doc.conversations[0].messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(doc.sessions).toHaveLength(2);
    expect(doc.sessions.filter((x: any) => x.revoked_at !== "")).toHaveLength(1);
    // Never a token, nor a hash of one.
    expect(JSON.stringify(doc)).not.toMatch(/token_hash|rt_|"[0-9a-f]{64}"/);
    // The same by user_id.
    const byUser = await getJson(s.url, "/v1/account/contacts/export", { user_id: c.userId }, auth(token));
    expect(byUser.body.data.contact.contact_id).toBe(id);
  });
});
