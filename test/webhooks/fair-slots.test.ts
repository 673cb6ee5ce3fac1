import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { issueTokens, ownerOf, send } from "../helpers/flows.js";
import { NO_CUSTOMER_LIMITS, startServer, type TestServer } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// One account's endpoint hangs (a loopback server that reads each request and never answers) with more
// conversations waiting on it than the dispatcher has slots; another account's endpoint still gets its event within
// 2 s. Default slots (AIAGENT_WEBHOOK_SLOTS 20, AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT 5); an attempt may take 30 s,
// longer than the test, so nothing the stuck endpoint holds is freed by a timeout meanwhile.
// One customer starts 25 conversations: the customer limits are off.
const ENV = { ...NO_CUSTOMER_LIMITS, AIAGENT_WEBHOOK_TIMEOUT_MS: "30000", AIAGENT_WEBHOOK_POLL_MS: "20" };
const STUCK_CONVERSATIONS = 25;
const SLOTS_PER_ENDPOINT = 5;

let s: TestServer;
const stuck = new WebhookReceiver();
const prompt = new WebhookReceiver();

beforeAll(async () => {
  s = await startServer({ env: ENV });
  await stuck.up();
  await prompt.up();
});
afterAll(async () => {
  await s.close(true);
  await stuck.down();
  await prompt.down();
});

describe("a stuck webhook endpoint", () => {
  it(
    "holds only its share of the slots: another account's endpoint receives its event within 2 s",
    async () => {
      stuck.stall = true;
      const a = await s.account();
      const b = await s.account();
      for (const [acc, r] of [
        [a, stuck],
        [b, prompt],
      ] as const)
        await s.app.webhooks.createEndpoint(ownerOf(acc), {
          url: r.url,
          eventTypes: ["conversation.started"],
          description: "",
        });

      // More of the stuck endpoint's conversations than there are slots, each with a delivery due.
      const t = await issueTokens(s.url, a, "customer-a");
      for (let i = 0; i < STUCK_CONVERSATIONS; i++) await send(s.url, t.access_token, `waiting ${i}`);
      await eventually("the stuck endpoint's share of attempts hanging", () => stuck.stalled >= SLOTS_PER_ENDPOINT);

      const other = await send(s.url, (await issueTokens(s.url, b, "customer-b")).access_token, "not held");
      const sent = Date.now();
      const got = () => prompt.accepted().find((x) => x.event.data.conversation_id === other.conversation_id);
      await eventually("the other account's event delivered", () => got() !== undefined, { tries: 1000 });
      // The product promise: a healthy endpoint is not held by someone else's stuck one.
      expect(Date.now() - sent).toBeLessThan(2000);
      // The stuck endpoint never held more than its share, though 20 of its conversations are still due.
      expect(stuck.stalled).toBe(SLOTS_PER_ENDPOINT);
    },
    scaled(90_000),
  );
});

describe("the slots' settings", () => {
  it("default to 20 slots, 5 per endpoint; a share larger than the slots is refused, naming both", () => {
    expect(loadConfig({}).webhooks).toMatchObject({ slots: 20, slotsPerEndpoint: 5 });
    expect(loadConfig({ AIAGENT_WEBHOOK_SLOTS: "3" }).webhooks).toMatchObject({ slots: 3, slotsPerEndpoint: 3 });
    expect(() => loadConfig({ AIAGENT_WEBHOOK_SLOTS: "4", AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT: "8" })).toThrow(
      /AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT must be at most AIAGENT_WEBHOOK_SLOTS \(4\) \(got "8"\)/,
    );
    expect(() => loadConfig({ AIAGENT_WEBHOOK_SLOTS: "0" })).toThrow(/AIAGENT_WEBHOOK_SLOTS must be at least 1/);
  });
});
