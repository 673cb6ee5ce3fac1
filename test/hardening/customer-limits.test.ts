import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { startInstances } from "../helpers/instances.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Issue 43, item 6: one customer's writes are bounded. With the defaults a customer cannot open 20 conversations an
// hour nor send 60 messages a minute; a conversation has one rating, which may be changed a bounded number of times.
// Every limit answers 429 with Retry-After, stores nothing, and is configuration. On PostgreSQL (api-postgres) the
// same cases run against a database of their own; the last case counts across two instances.

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20", AIAGENT_WEBHOOK_TIMEOUT_MS: "2000" } });
});
afterAll(() => s?.close(true));

const auth = async (a: TestAccount) => ({ authorization: `Bearer ${await idToken(s.url, a)}` });
const sendAs = (url: string, token: string, body: Record<string, string>, key?: string) =>
  postJson(
    url,
    `/ai_agent/send_message?access_token=${encodeURIComponent(token)}`,
    body,
    key ? { "idempotency-key": key } : {},
  );

function expect429(r: JsonResponse, what: RegExp) {
  expect(r.status, JSON.stringify(r.body)).toBe(429);
  expect(r.body.code).toBe("resource_exhausted");
  expect(r.body.message).toMatch(what);
  expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
}

async function stored(a: TestAccount, conversationId: string): Promise<string[]> {
  const r = await getJson(
    s.url,
    "/get_messages_for_conversation",
    { conversation_id: conversationId, limit: 100 },
    await auth(a),
  );
  return r.body.messages.map((m: { content: string }) => m.content);
}

describe("customer write limits (defaults)", () => {
  it("a customer sends at most 20 messages a minute: the 21st is 429 with Retry-After and stored nowhere", async () => {
    const a = await s.account();
    const t = await issueTokens(s.url, a, "chatty");
    const first = await sendAs(s.url, t.access_token, { content: "message 1" }, "key-1");
    const conversationId = first.body.data.conversation_id as string;
    for (let i = 2; i <= 20; i++) {
      const r = await sendAs(s.url, t.access_token, { conversation_id: conversationId, content: `message ${i}` });
      expect(r.status, `message ${i}`).toBe(200);
    }
    const over = await sendAs(s.url, t.access_token, { conversation_id: conversationId, content: "message 21" });
    expect429(over, /20 messages a minute/);
    // A new conversation is a message too.
    expect429(await sendAs(s.url, t.access_token, { content: "elsewhere" }), /messages a minute/);
    const contents = await stored(a, conversationId);
    expect(contents.filter((c) => c.startsWith("message "))).toHaveLength(20);
    expect(contents).not.toContain("message 21");
    // A retry of a stored message writes nothing and is not refused: it answers its first answer.
    const retry = await sendAs(s.url, t.access_token, { content: "message 1" }, "key-1");
    expect(retry.status).toBe(200);
    expect(retry.body.data.user_message.message_id).toBe(first.body.data.user_message.message_id);
    // Another customer of the account, and the same user_id of another account, go on.
    const other = await issueTokens(s.url, a, "quiet");
    expect((await sendAs(s.url, other.access_token, { content: "hello" })).status).toBe(200);
    const b = await s.account();
    const sameName = await issueTokens(s.url, b, "chatty");
    expect((await sendAs(s.url, sameName.access_token, { content: "hello" })).status).toBe(200);
  });

  it("a customer starts at most 10 conversations an hour, with any token; its open conversations still take messages", async () => {
    const a = await s.account();
    const conversations: string[] = [];
    for (let i = 0; i < 10; i++) {
      // A fresh token each time: the limit is the customer's, not the token's.
      const t = await issueTokens(s.url, a, "opener");
      const r = await sendAs(s.url, t.access_token, { content: `start ${i}` });
      expect(r.status, `conversation ${i}`).toBe(200);
      conversations.push(r.body.data.conversation_id);
    }
    const t = await issueTokens(s.url, a, "opener");
    expect429(await sendAs(s.url, t.access_token, { content: "start 10" }), /10 new conversations an hour/);
    const list = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(list.body.data.conversations).toHaveLength(10);
    const more = await sendAs(s.url, t.access_token, { conversation_id: conversations[0]!, content: "one more" });
    expect(more.status).toBe(200);
  });

  it("one rating per conversation: the same rating again records nothing; changes beyond 5 an hour are 429", async () => {
    const a = await s.account();
    const receiver = new WebhookReceiver();
    await receiver.up();
    try {
      await postJson(
        s.url,
        "/v1/account/webhooks",
        { url: receiver.url, event_types: ["conversation.rated"] },
        await auth(a),
      );
      const t = await issueTokens(s.url, a, "rater");
      const id = (await sendAs(s.url, t.access_token, { content: "Hello" })).body.data.conversation_id as string;
      expect((await postJson(s.url, "/close_conversation", { conversation_id: id }, await auth(a))).status).toBe(200);
      const rate = (score: number, comment = "") =>
        postJson(s.url, `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`, {
          conversation_id: id,
          score,
          comment,
        });
      const rated = async () =>
        (await getJson(s.url, "/v1/account/events", { types: "conversation.rated" }, await auth(a))).body.data.events
          .length as number;

      expect((await rate(4, "kind")).status).toBe(200);
      // The same rating, again and again: answered with the rating, no event, no webhook, not counted.
      for (let i = 0; i < 10; i++) {
        const same = await rate(4, "kind");
        expect(same.status).toBe(200);
        expect(same.body.data.rating).toMatchObject({ score: 4, comment: "kind" });
      }
      expect(await rated()).toBe(1);
      // Changes: the first rating and four changes make five in the hour.
      for (const score of [5, 3, 2, 1]) expect((await rate(score)).status).toBe(200);
      expect(await rated()).toBe(5);
      expect429(await rate(5), /rating can change at most 5 times an hour/);
      expect(await rated()).toBe(5);
      const frame = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
      expect(frame.body.data.conversations[0].rating.score).toBe(1);
      await eventually("five ratings delivered", () => receiver.accepted().length === 5);
      // The same rating as the stored one is still answered (no change, nothing to limit).
      expect((await rate(1)).status).toBe(200);
      expect(await rated()).toBe(5);
    } finally {
      await receiver.down();
    }
  });

  it("each limit is configuration: a count, 0 for off, validated at start", async () => {
    for (const name of [
      "AIAGENT_RATE_LIMIT_CONVERSATIONS_PER_HOUR",
      "AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE",
      "AIAGENT_RATE_LIMIT_RATINGS_PER_HOUR",
    ])
      expect(() => loadConfig({ [name]: "many" })).toThrow(
        new ConfigError(`${name} must be a whole number (got "many")`),
      );
    expect(loadConfig({}).customerLimits).toEqual({
      conversationsPerHour: 10,
      messagesPerMinute: 20,
      ratingsPerHour: 5,
    });
    expect(loadConfig({ AIAGENT_RATE_LIMIT: "off" }).customerLimits).toBeUndefined();

    const custom = await startServer({
      env: { AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "3", AIAGENT_RATE_LIMIT_CONVERSATIONS_PER_HOUR: "0" },
    });
    try {
      const a = await custom.account();
      const t = await issueTokens(custom.url, a, "configured");
      // Conversations unlimited, three messages a minute.
      for (let i = 0; i < 3; i++)
        expect((await sendAs(custom.url, t.access_token, { content: `c${i}` })).status).toBe(200);
      const over = await sendAs(custom.url, t.access_token, { content: "c3" });
      expect(over.status).toBe(429);
      expect(over.body.message).toMatch(/at most 3 messages a minute/);
    } finally {
      await custom.close(true);
    }
  });
});

const pgSkip = await postgresSkipReason();
if (pgSkip) console.warn(`customer limits across instances skipped: ${pgSkip}`);
describe.skipIf(pgSkip !== undefined)("customer write limits across instances on PostgreSQL", () => {
  it(
    "messages sent to two instances in turn are counted once, together",
    async () => {
      const { instances, stop } = await startInstances(2, { AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "6" });
      try {
        const a = await createTestAccount(instances[0]!.app, `limits-${randomUUID()}@example.com`);
        const t = await issueTokens(instances[0]!.url, a, "everywhere");
        const statuses: number[] = [];
        for (let i = 0; i < 8; i++)
          statuses.push((await sendAs(instances[i % 2]!.url, t.access_token, { content: `turn ${i}` })).status);
        expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      } finally {
        await stop();
      }
    },
    scaled(60_000),
  );
});
