import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Two instances on one PostgreSQL, each running its own dispatcher, polling often so that they race for the same
// deliveries.
const skip = await postgresSkipReason();
if (skip) console.warn(`webhooks on two PostgreSQL instances skipped: ${skip}`);

const SECRET = "a-test-secret-for-webhook-instances-0123456789";

describe.skipIf(skip !== undefined)("webhooks with two instances on one PostgreSQL", () => {
  let database: TestDatabase;
  const dir = mkdtempSync(join(tmpdir(), "aiagent-hooks-instances-"));
  const instances: { app: App; server: RunningServer; url: string }[] = [];
  const receiver = new WebhookReceiver();
  let acc: TestAccount;

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 2; i++) {
      const config = loadConfig({
        AIAGENT_DATABASE_URL: database.url,
        AIAGENT_DB: join(dir, "unused.db"),
        AIAGENT_PORT: "0",
        AIAGENT_SECRETS: SECRET,
        AIAGENT_LOG_LEVEL: "silent",
        AIAGENT_WEBHOOK_POLL_MS: "5",
        AIAGENT_WEBHOOK_RETRY_DELAYS: "0.05,0.05,0.05,0.05,0.05",
      });
      const app = await buildApp(config, createLogger("silent"));
      const server = await app.listen();
      instances.push({ app, server, url: server.url });
    }
    await receiver.up();
    acc = await createTestAccount(instances[0]!.app, "owner@hooks-instances.example");
  });

  afterAll(async () => {
    for (const i of instances) {
      await i.server.close(1000);
      await i.app.close();
    }
    await receiver.down();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("each event is delivered once, by one of them, in order per conversation", async () => {
    const [a, b] = instances;
    const token = await idToken(a!.url, acc);
    const ep = await postJson(
      a!.url,
      "/v1/account/webhooks",
      { url: receiver.url },
      { authorization: `Bearer ${token}` },
    );
    expect(ep.status).toBe(200);
    // Messages written through both instances, in three conversations, some at once.
    const convs: { url: string; token: string; id: string }[] = [];
    for (const [i, inst] of [a!, b!, a!].entries()) {
      const t = await issueTokens(inst.url, acc, `customer-${i}`);
      convs.push({
        url: inst.url,
        token: t.access_token,
        id: (await send(inst.url, t.access_token, "first")).conversation_id,
      });
    }
    for (let round = 0; round < 10; round++)
      await Promise.all(convs.map((c, i) => send(instances[(round + i) % 2]!.url, c.token, `round ${round}`, c.id)));
    const log = await getJson(a!.url, "/v1/account/events", { limit: 1000 }, { authorization: `Bearer ${token}` });
    const events = log.body.data.events as { event_id: string }[];
    // 3 starts, and 33 messages with their 33 answers.
    expect(events).toHaveLength(3 + 66);
    await eventually("every event delivered", () => receiver.accepted().length >= events.length, { tries: 800 });
    // Every delivery is recorded delivered after exactly one attempt: no instance sent one the other had claimed.
    const auth = { authorization: `Bearer ${token}` };
    const path = `/v1/account/webhooks/${ep.body.data.endpoint.endpoint_id}/deliveries`;
    await eventually("every delivery recorded", async () => {
      const d = await getJson(a!.url, path, { limit: 500, status: "delivered" }, auth);
      return d.body.data.deliveries.length === events.length;
    });
    const deliveries = (await getJson(b!.url, path, { limit: 500 }, auth)).body.data.deliveries as {
      attempts: number;
    }[];
    expect(deliveries.map((d) => d.attempts)).toEqual(events.map(() => 1));
    const ids = receiver.accepted().map((r) => r.event.event_id as string);
    expect(ids.length).toBe(events.length);
    expect(new Set(ids)).toEqual(new Set(events.map((e) => e.event_id)));
    for (const c of convs) {
      const orders = receiver
        .accepted()
        .filter((r) => r.event.type === "message.created" && r.event.data.conversation_id === c.id)
        .map((r) => r.event.data.message.message_order as number);
      expect(orders).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    }
  });
});
