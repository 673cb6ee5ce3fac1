import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Issue 32, item 4: the customer rates a closed conversation; the rating is stored on it, shown in the account's
// lists and the frame's, recorded as conversation.rated in the event log, and delivered as a webhook.

let s: TestServer;
let receiver: WebhookReceiver | undefined;

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20", AIAGENT_WEBHOOK_TIMEOUT_MS: "2000" } });
});
afterEach(async () => {
  await receiver?.down();
});
afterAll(async () => {
  await s?.close(true);
});

const auth = async (a: TestAccount) => ({ authorization: `Bearer ${await idToken(s.url, a)}` });
const rate = (token: string, body: unknown) =>
  postJson(s.url, `/ai_agent/rate_conversation?access_token=${encodeURIComponent(token)}`, body);

describe("rating a conversation", () => {
  it("is refused while live, then stored once closed, in the lists, the event log and a webhook", async () => {
    const a = await s.account();
    receiver = new WebhookReceiver();
    await receiver.up();
    const hook = await postJson(
      s.url,
      "/v1/account/webhooks",
      { url: receiver.url, event_types: ["conversation.rated"] },
      await auth(a),
    );
    expect(hook.status).toBe(200);
    const t = await issueTokens(s.url, a, "rating-customer");
    const sent = await send(s.url, t.access_token, "Where is my parcel?");
    const id = sent.conversation_id as string;

    const early = await rate(t.access_token, { conversation_id: id, score: 5 });
    expect(early.status).toBe(400);
    expect(early.body.message).toContain("once it is closed");

    expect((await postJson(s.url, "/close_conversation", { conversation_id: id }, await auth(a))).status).toBe(200);
    const rated = await rate(t.access_token, { conversation_id: id, score: 4, comment: "  Quick and kind.  " });
    expect(rated.status).toBe(200);
    expect(rated.body.data.rating).toMatchObject({ score: 4, comment: "Quick and kind." });

    // The frame's list and the account's list of the contact's conversations carry it.
    const frame = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(frame.body.data.conversations[0].rating.score).toBe(4);
    const contactId = (await contacts(s.url, await idToken(s.url, a), a.email)).body.data.data.contacts[0].contact_id;
    const list = await getJson(s.url, "/get_conversations_for_contact", { contact_id: contactId }, await auth(a));
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    expect(list.body.data.conversations[0].rating).toMatchObject({ score: 4, comment: "Quick and kind." });

    // The event log and the webhook receiver have conversation.rated, with the rating.
    const events = await getJson(s.url, "/v1/account/events", { types: "conversation.rated" }, await auth(a));
    expect(events.body.data.events).toHaveLength(1);
    expect(events.body.data.events[0].data.conversation.rating.score).toBe(4);
    await eventually("the rating delivered", () => receiver!.accepted().length === 1);
    const delivered = JSON.parse(receiver.accepted()[0]!.body);
    expect(delivered.type).toBe("conversation.rated");
    expect(delivered.data.conversation.rating).toMatchObject({ score: 4, comment: "Quick and kind." });

    // Rated again: the latest counts.
    expect((await rate(t.access_token, { conversation_id: id, score: 5 })).body.data.rating.score).toBe(5);
  });

  it("refuses a score out of range, another customer's conversation, and changes nothing", async () => {
    const a = await s.account();
    const t = await issueTokens(s.url, a, "rating-owner");
    const id = (await send(s.url, t.access_token, "Hello")).conversation_id as string;
    expect((await postJson(s.url, "/close_conversation", { conversation_id: id }, await auth(a))).status).toBe(200);
    for (const score of [0, 6, 2.5]) {
      const r = await rate(t.access_token, { conversation_id: id, score });
      expect(r.status, String(score)).toBe(400);
      expect(r.body.message).toContain("score");
    }
    const other = await issueTokens(s.url, a, "rating-stranger");
    expect((await rate(other.access_token, { conversation_id: id, score: 1 })).status).toBe(404);
    const frame = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(frame.body.data.conversations[0].rating).toBeUndefined();
  });
});
