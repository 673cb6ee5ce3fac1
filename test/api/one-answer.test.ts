import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentChunk, type LlmStandIn, sendEvent, startLlmStandIn, startSse } from "../frame/llm-stand-in.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { startInstances } from "../helpers/instances.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, startServer, type TestAccount } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";

// One Idempotency-Key, one stored message and one agent reply, however the retries overlap: three sends with one
// key at once (on three instances on PostgreSQL), each answered with the same message and the same reply, and the
// model asked once. The model stand-in takes a moment to answer, so the retries arrive while it is answering.

const ROUNDS = 50;

/** A model that answers "answer to: <the latest question>" after a short pause, counting questions. */
async function slowModel(): Promise<{ llm: LlmStandIn; asked: Map<string, number>; failOnce: Set<string> }> {
  const llm = await startLlmStandIn();
  const asked = new Map<string, number>();
  // Questions whose first call fails (the model's 500).
  const failOnce = new Set<string>();
  llm.behave(async (req, res) => {
    const question = req.body.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
    asked.set(question, (asked.get(question) ?? 0) + 1);
    if (failOnce.delete(question)) {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
      return;
    }
    startSse(res);
    sendEvent(res, contentChunk("answer to: "));
    await sleep(20 + Math.floor(Math.random() * 40));
    sendEvent(res, contentChunk(question, "stop"));
    sendEvent(res, "[DONE]");
    res.end();
  });
  return { llm, asked, failOnce };
}

interface Deployment {
  urls: string[];
  account: TestAccount;
  idToken: string;
  stop(): Promise<void>;
}

const sendKeyed = (url: string, token: string, key: string, body: Record<string, string>) =>
  postJson(url, `/ai_agent/send_message?access_token=${encodeURIComponent(token)}`, body, { "idempotency-key": key });

async function messages(d: Deployment, conversationId: string): Promise<{ role: string; content: string }[]> {
  const r = await getJson(
    d.urls[0]!,
    "/get_messages_for_conversation",
    { conversation_id: conversationId, limit: 100 },
    { authorization: `Bearer ${d.idToken}` },
  );
  return r.body.messages;
}

function suite(name: string, skip: string | undefined, deploy: (llmUrl: string) => Promise<Deployment>) {
  describe.skipIf(skip !== undefined)(name, () => {
    let d: Deployment;
    let model: Awaited<ReturnType<typeof slowModel>>;
    beforeAll(async () => {
      model = await slowModel();
      d = await deploy(model.llm.url);
    }, scaled(120_000));
    afterAll(async () => {
      await d?.stop();
      await model?.llm.close();
    });

    it(
      `three overlapping sends with one key give one message, one reply and one model call, ${ROUNDS} of ${ROUNDS} rounds`,
      async () => {
        const failures: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const t = await issueTokens(d.urls[0]!, d.account, `overlap-${round}-${randomUUID()}`);
          const key = randomUUID();
          const question = `question ${round} ${randomUUID()}`;
          // The first send at once, the retries 0–60 ms after it (as a client retrying a slow answer would), each to
          // its own instance.
          const sends = [0, 1, 2].map(async (i) => {
            if (i > 0) await sleep(Math.floor(Math.random() * 60));
            return sendKeyed(d.urls[i % d.urls.length]!, t.access_token, key, { content: question });
          });
          const answers: JsonResponse[] = await Promise.all(sends);
          const statuses = answers.map((a) => a.status);
          const messageIds = new Set(answers.map((a) => a.body.data?.user_message?.message_id));
          const replyIds = new Set(answers.map((a) => a.body.data?.reply?.message_id));
          const conversationId = answers[0]!.body.data?.conversation_id as string;
          const stored = conversationId ? await messages(d, conversationId) : [];
          const summary = {
            round,
            statuses,
            messages: messageIds.size,
            replies: [...replyIds],
            stored: stored.map((m) => m.role),
            calls: model.asked.get(question) ?? 0,
          };
          if (
            statuses.some((s) => s !== 200) ||
            messageIds.size !== 1 ||
            replyIds.size !== 1 ||
            replyIds.has(undefined) ||
            stored.length !== 2 ||
            stored[1]?.content !== `answer to: ${question}` ||
            summary.calls !== 1
          )
            failures.push(JSON.stringify(summary));
          // Once all is settled, a later retry answers the same reply, and asks nobody.
          const later = await sendKeyed(d.urls.at(-1)!, t.access_token, key, { content: question });
          if (later.body.data?.reply?.message_id !== [...replyIds][0] || model.asked.get(question) !== 1)
            failures.push(JSON.stringify({ round, later: later.status, reply: later.body.data?.reply?.message_id }));
        }
        expect(failures).toEqual([]);
      },
      scaled(300_000),
    );

    it(
      "a retry answers its own message's reply, never the reply of a message sent beside it",
      async () => {
        const t = await issueTokens(d.urls[0]!, d.account, `beside-${randomUUID()}`);
        const first = await sendKeyed(d.urls[0]!, t.access_token, randomUUID(), { content: "opening words" });
        const conversationId = first.body.data.conversation_id as string;
        for (let round = 0; round < 10; round++) {
          const [ka, kb] = [randomUUID(), randomUUID()];
          const a = { conversation_id: conversationId, content: `ask A ${round}` };
          const b = { conversation_id: conversationId, content: `ask B ${round}` };
          const answers = await Promise.all([
            sendKeyed(d.urls[0]!, t.access_token, ka, a),
            sendKeyed(d.urls[1 % d.urls.length]!, t.access_token, kb, b),
            sleep(Math.floor(Math.random() * 30)).then(() => sendKeyed(d.urls.at(-1)!, t.access_token, ka, a)),
            sleep(Math.floor(Math.random() * 30)).then(() => sendKeyed(d.urls.at(-1)!, t.access_token, kb, b)),
          ]);
          for (const [i, r] of answers.entries()) {
            expect(r.status).toBe(200);
            const asked = i % 2 === 0 ? a.content : b.content;
            expect(r.body.data.user_message.content).toBe(asked);
            expect(r.body.data.reply?.content).toBe(`answer to: ${asked}`);
          }
          expect(answers[2]!.body.data.reply.message_id).toBe(answers[0]!.body.data.reply.message_id);
          expect(answers[3]!.body.data.reply.message_id).toBe(answers[1]!.body.data.reply.message_id);
        }
        const stored = await messages(d, conversationId);
        expect(stored.filter((m) => m.role === "assistant")).toHaveLength(21);
      },
      scaled(120_000),
    );

    it(
      "after the model failed, the same key asks it again for the same stored message, once",
      async () => {
        const t = await issueTokens(d.urls[0]!, d.account, `failed-${randomUUID()}`);
        const key = randomUUID();
        const question = `will fail first ${randomUUID()}`;
        model.failOnce.add(question);
        const failed = await sendKeyed(d.urls[0]!, t.access_token, key, { content: question });
        expect(failed.status).toBe(503);
        expect(failed.body.message).toMatch(/your message was saved/);
        // The retry (the frame's "Try again"), twice at once: the stored message is answered, once.
        const [again, twice] = await Promise.all([
          sendKeyed(d.urls.at(-1)!, t.access_token, key, { content: question }),
          sendKeyed(d.urls[0]!, t.access_token, key, { content: question }),
        ]);
        expect(again.status).toBe(200);
        expect(again.body.data.reply.content).toBe(`answer to: ${question}`);
        expect(twice.body.data.reply.message_id).toBe(again.body.data.reply.message_id);
        expect(model.asked.get(question)).toBe(2);
        const stored = await messages(d, again.body.data.conversation_id);
        expect(stored.map((m) => m.role)).toEqual(["user", "assistant"]);
      },
      scaled(60_000),
    );
  });
}

// The customer limits are tried in test/hardening/customer-limits.test.ts; here one customer sends 21 messages.
const env = (llmUrl: string) => ({
  AIAGENT_LLM_BASE_URL: llmUrl,
  AIAGENT_LLM_MODEL: "stand-in-model",
  AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "0",
});

suite("one answer per key: one instance on SQLite", undefined, async (llmUrl) => {
  const s = await startServer({ env: { ...env(llmUrl), AIAGENT_LOG_LEVEL: "warn" } });
  const account = await s.account();
  return { urls: [s.url], account, idToken: await idToken(s.url, account), stop: () => s.close(true) };
});

const pgSkip = await postgresSkipReason();
if (pgSkip) console.warn(`one answer per key across instances skipped: ${pgSkip}`);
suite("one answer per key: three instances on PostgreSQL", pgSkip, async (llmUrl) => {
  const { instances, stop } = await startInstances(3, env(llmUrl));
  const account = await createTestAccount(instances[0]!.app, `one-answer-${randomUUID()}@example.com`);
  const urls = instances.map((i) => i.url);
  return { urls, account, idToken: await idToken(urls[0]!, account), stop };
});
