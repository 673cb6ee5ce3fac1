import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

const ENV = { AIAGENT_WEBHOOK_POLL_MS: "20", AIAGENT_WEBHOOK_TIMEOUT_MS: "2000" };

let s: TestServer;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  s = await startServer({ env: ENV });
  await receiver.up();
});
afterAll(async () => {
  await receiver.down();
  await s.close(true);
});

describe("RotateWebhookSecret", () => {
  it("answers a new secret once; the next deliveries verify with it and no longer with the old one", async () => {
    const a = await s.account();
    const auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
    const created = await postJson(
      s.url,
      "/v1/account/webhooks",
      { url: receiver.url, event_types: ["conversation.started"] },
      auth,
    );
    const id = created.body.data.endpoint.endpoint_id as string;
    const old = created.body.data.secret as string;

    const r = await postJson(s.url, `/v1/account/webhooks/${id}/rotate_secret`, {}, auth);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const fresh = r.body.data.secret as string;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(old);
    expect(r.body.data.endpoint).toMatchObject({ endpoint_id: id, status: "enabled" });
    // Listed afterwards, never the secret.
    const list = await getJson(s.url, "/v1/account/webhooks", {}, auth);
    expect(JSON.stringify(list.body)).not.toContain(fresh.slice(6));

    await send(s.url, (await issueTokens(s.url, a, "rotated")).access_token, "hi");
    await eventually("a delivery", () => receiver.accepted().length >= 1);
    const { body, headers } = receiver.accepted()[0]!;
    const h = headers as Record<string, string>;
    expect(() => new Webhook(fresh).verify(body, h)).not.toThrow();
    expect(() => new Webhook(old).verify(body, h)).toThrow();
    // Shown once: never written to the log.
    expect(s.logs.join("\n")).not.toContain(fresh.slice(6));
  });

  it("another account's endpoint is not found", async () => {
    const a = await s.account();
    const b = await s.account();
    const created = await postJson(
      s.url,
      "/v1/account/webhooks",
      { url: receiver.url },
      { authorization: `Bearer ${await idToken(s.url, a)}` },
    );
    const id = created.body.data.endpoint.endpoint_id as string;
    const r = await postJson(
      s.url,
      `/v1/account/webhooks/${id}/rotate_secret`,
      {},
      { authorization: `Bearer ${await idToken(s.url, b)}` },
    );
    expect(r.status).toBe(404);
  });
});
