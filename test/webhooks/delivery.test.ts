import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Short retries so a failing receiver is retried at once; a test that needs the long schedule moves the clock.
const ENV = {
  AIAGENT_WEBHOOK_RETRY_DELAYS: "0.05,0.05,0.05,0.05,30,60,120,300,600,1200",
  AIAGENT_WEBHOOK_POLL_MS: "20",
  AIAGENT_WEBHOOK_TIMEOUT_MS: "2000",
};

let s: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  s = await startServer({ env: ENV });
});
afterAll(async () => {
  await s.close(true);
});
afterEach(async () => {
  await receiver?.down();
});

async function endpoint(a: TestAccount, url: string, eventTypes: string[] = []) {
  const token = await idToken(s.url, a);
  const r = await postJson(s.url, "/v1/account/webhooks", { url, event_types: eventTypes }, auth(token));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { token, id: r.body.data.endpoint.endpoint_id as string, secret: r.body.data.secret as string };
}
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe("webhook delivery", () => {
  it("a message sent in the frame arrives as message.created, signed so that standardwebhooks verifies it", async () => {
    receiver = new WebhookReceiver();
    await receiver.up();
    const a = await s.account();
    const ep = await endpoint(a, receiver.url, ["message.created"]);
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const t = await issueTokens(s.url, a, "customer-1");
    const sent = await send(s.url, t.access_token, "Where is my parcel?");
    await eventually("two messages delivered", () => receiver.accepted().length >= 2);
    const [first] = receiver.accepted();
    const wh = new Webhook(ep.secret);
    const verified = wh.verify(first!.body, first!.headers as Record<string, string>) as any;
    expect(verified.type).toBe("message.created");
    expect(verified.event_id).toBe(first!.headers["webhook-id"]);
    expect(verified.account_id).toBe(a.accountId);
    expect(verified.data.conversation_id).toBe(sent.conversation_id);
    expect(verified.data.message).toMatchObject({
      message_id: sent.user_message.message_id,
      content: "Where is my parcel?",
      role: "user",
      message_order: 1,
    });
    expect(first!.headers["content-type"]).toBe("application/json");
    // The body is the event exactly as ListEvents shows it.
    const log = await getJson(s.url, "/v1/account/events", { types: "message.created" }, auth(ep.token));
    expect(log.body.data.events[0]).toEqual(verified);
  });

  it("a tampered body, or another secret, fails verification", async () => {
    receiver = new WebhookReceiver();
    await receiver.up();
    const a = await s.account();
    const ep = await endpoint(a, receiver.url, ["message.created"]);
    const t = await issueTokens(s.url, a, "customer-2");
    await send(s.url, t.access_token, "hello");
    await eventually("a delivery", () => receiver.accepted().length >= 1);
    const { body, headers } = receiver.accepted()[0]!;
    const h = headers as Record<string, string>;
    expect(body).toContain('"content":"hello"');
    expect(() => new Webhook(ep.secret).verify(body.replace('"content":"hello"', '"content":"hellO"'), h)).toThrow();
    expect(() => new Webhook(ep.secret).verify(`${body} `, h)).toThrow();
    const other = (await endpoint(a, "http://127.0.0.1:9/x")).secret;
    expect(() => new Webhook(other).verify(body, h)).toThrow();
    expect(() => new Webhook(ep.secret).verify(body, h)).not.toThrow();
  });

  it("a receiver answering 500 three times gets the event on the fourth try, with the same id", async () => {
    receiver = new WebhookReceiver();
    receiver.respond = (n) => (n < 3 ? 500 : 200);
    await receiver.up();
    const a = await s.account();
    const ep = await endpoint(a, receiver.url, ["conversation.started"]);
    const t = await issueTokens(s.url, a, "customer-3");
    await send(s.url, t.access_token, "hi");
    await eventually("the fourth try", () => receiver.received.length >= 4);
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(ids).size).toBe(1);
    for (const r of receiver.received)
      expect(() => new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    await eventually("the delivery recorded", async () => {
      const d = await getJson(s.url, `/v1/account/webhooks/${ep.id}/deliveries`, {}, auth(ep.token));
      return d.body.data.deliveries[0]?.status === "delivered";
    });
    const d = await getJson(s.url, `/v1/account/webhooks/${ep.id}/deliveries`, {}, auth(ep.token));
    expect(d.body.data.deliveries[0]).toMatchObject({
      attempts: 4,
      last_response_code: 200,
      event_type: "conversation.started",
    });
    // Re-sent on request: the same event id again.
    const again = await postJson(
      s.url,
      `/v1/account/webhooks/${ep.id}/deliveries/${d.body.data.deliveries[0].delivery_id}/resend`,
      {},
      auth(ep.token),
    );
    expect(again.status).toBe(200);
    await eventually("the re-sent delivery", () => receiver.received.length >= 5);
    expect(receiver.received[4]!.headers["webhook-id"]).toBe(ids[0]);
  });

  it("a redirect is not followed: it counts as a failed attempt", async () => {
    receiver = new WebhookReceiver();
    receiver.respond = (n) => (n < 2 ? 307 : 204);
    await receiver.up();
    const a = await s.account();
    const ep = await endpoint(a, receiver.url, ["conversation.started"]);
    await send(s.url, (await issueTokens(s.url, a, "redirected")).access_token, "hi");
    await eventually("the third try", () => receiver.received.length >= 3);
    expect(receiver.received.map((r) => [r.path, r.status])).toEqual([
      ["/hooks", 307],
      ["/hooks", 307],
      ["/hooks", 204],
    ]);
    await eventually("the delivery recorded", async () => {
      const d = await getJson(s.url, `/v1/account/webhooks/${ep.id}/deliveries`, {}, auth(ep.token));
      return d.body.data.deliveries[0]?.status === "delivered";
    });
  });

  it("a receiver down while 100 messages are written gets them all once back, in order per conversation; ListEvents after its last cursor returns exactly the missed ones", async () => {
    receiver = new WebhookReceiver();
    await receiver.up();
    const a = await s.account();
    await endpoint(a, receiver.url);
    const tokens = await Promise.all([0, 1, 2, 3].map((i) => issueTokens(s.url, a, `down-${i}`)));
    const convs: string[] = [];
    for (const t of tokens) convs.push((await send(s.url, t.access_token, "before")).conversation_id);
    await eventually("the first events", () => receiver.accepted().length >= 12);
    const seen = receiver.accepted();
    const lastCursor = seen[seen.length - 1]!.event.cursor as string;
    await receiver.down();
    const before = receiver.received.length;
    // 50 sends: 50 customer messages and 50 answers of the agent, in four conversations.
    for (let i = 0; i < 50; i++) await send(s.url, tokens[i % 4]!.access_token, `while down ${i}`, convs[i % 4]);
    await receiver.up();
    // The failed heads wait out their back-off: the clock moves on instead of the test waiting.
    await eventually("every missed event", () => receiver.accepted().length >= seen.length + 100, {
      tries: 600,
      step: () => s.clock.advance(60_000),
    });
    const after = receiver.accepted().slice(seen.length);
    expect(after).toHaveLength(100);
    expect(new Set(after.map((r) => r.event.event_id)).size).toBe(100);
    for (const [i, c] of convs.entries()) {
      const orders = after
        .filter((r) => r.event.data.conversation_id === c)
        .map((r) => r.event.data.message.message_order);
      // 13 sends in the first two conversations, 12 in the others: each a message and its answer.
      expect(orders).toHaveLength(i < 2 ? 26 : 24);
      expect(orders).toEqual([...orders].sort((x, y) => x - y));
    }
    expect(receiver.received.length).toBeGreaterThan(before + 100 - 1);
    // The log replays exactly what the receiver missed.
    const token = await idToken(s.url, a);
    const log = await getJson(s.url, "/v1/account/events", { after: lastCursor, limit: 1000 }, auth(token));
    expect(log.body.data.events.map((e: any) => e.event_id)).toEqual(
      [...after].sort((x, y) => Number(x.event.cursor) - Number(y.event.cursor)).map((r) => r.event.event_id),
    );
    expect(log.body.data.has_more).toBe(false);
  });
});
