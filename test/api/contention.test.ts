import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// Racing writes both succeed: a page opened in many tabs at once, many messages into one conversation at once.
// Runs on SQLite (one writer at a time) and, in the api-postgres project, on PostgreSQL (row locks, READ COMMITTED).
const CALLERS = 50;

describe("concurrent writes to the same rows", () => {
  let s: TestServer;
  let acc: TestAccount;

  beforeAll(async () => {
    // One customer sends 50 messages at once: the per-customer limits (issue 43) are off for this contention test.
    // On PostgreSQL the 50 units queue on the conversation's row lock, and a write waits for a lock at most
    // AIAGENT_BUSY_TIMEOUT_MS (1 s by default) before answering 503: on a machine at load 14 the last in the queue
    // waited longer (CI, 5 of 50). What is tested is that every write lands, gap-free, not that bound: it scales here.
    s = await startServer({ env: { ...NO_CUSTOMER_LIMITS, AIAGENT_BUSY_TIMEOUT_MS: String(scaled(10_000)) } });
    acc = await s.account();
  });

  afterAll(async () => {
    await s?.close(true);
  });

  it(`${CALLERS} first get_access_token at once for one new user: every call 200, one contact`, async () => {
    const userId = "racing-first-contact";
    const answers = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) =>
        postJson(s.url, "/ai_agent/get_access_token", {
          user_id: userId,
          chatbot_id: acc.chatbotId,
          client_api_key: acc.apiKey,
          // Each tab names the customer differently: the profile rows race too.
          contact: { contact_name: `Tab ${i}` },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    // One contact: a message from any of the sessions lands on it, and the list shows it once.
    const t = answers[7]!.body.data.access_token as string;
    await send(s.url, t, "hello");
    const page = await s.app.store.contacts.list({
      accountId: acc.accountId,
      filter: "all",
      assignee: null,
      search: "",
      liveSince: 0,
      limit: 100,
      offset: 0,
    });
    const mine = page.contacts.filter((c) => c.userId === userId);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.contactName).toMatch(/^Tab \d+$/);
  });

  it(`${CALLERS} send_message at once into one conversation: every call 200, orders gap-free`, async () => {
    const t = await issueTokens(s.url, acc, "racing-sender");
    const first = await send(s.url, t.access_token, "start");
    const answers = await Promise.all(
      Array.from({ length: CALLERS }, (_, i) =>
        postJson(s.url, `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`, {
          content: `m${i}`,
          conversation_id: first.conversation_id,
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const orders = answers
      .flatMap((a) => [a.body.data.user_message.message_order, a.body.data.reply?.message_order])
      .concat([first.user_message.message_order, first.reply?.message_order])
      .filter((o): o is number => o !== undefined)
      .sort((x, y) => x - y);
    expect(orders).toEqual(Array.from({ length: orders.length }, (_, i) => i + 1));
    expect(orders.length).toBeGreaterThan(CALLERS);
  });

  it("10 refresh_token at once with one token under rotation: every call 200, all handed the same successor", async () => {
    const auth = { authorization: `Bearer ${await idToken(s.url, acc)}` };
    const policy = await postJson(
      s.url,
      `/v1/account/chatbots/${acc.chatbotId}/session_policy`,
      { rotate_refresh_tokens: true, reuse_grace_seconds: 30 },
      auth,
    );
    expect(policy.status).toBe(200);
    const t = await issueTokens(s.url, acc, "racing-refresh");
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        postJson(s.url, "/ai_agent/refresh_token", {
          user_id: "racing-refresh",
          chatbot_id: acc.chatbotId,
          refresh_token: t.refresh_token,
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const successors = new Set(answers.map((a) => a.body.data.refresh_token as string));
    expect(successors.size).toBe(1);
    expect(successors.has(t.refresh_token)).toBe(false);
  });
});
