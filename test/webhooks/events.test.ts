import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount } from "../helpers/server.js";
import { eventually } from "../helpers/webhook-receiver.js";

const fx = serverForFile({
  server: {
    env: {
      AIAGENT_WEBHOOK_POLL_MS: "20",
      AIAGENT_WEBHOOK_RETRY_DELAYS: "0.02,0.02,0.02",
      AIAGENT_WEBHOOK_DISABLE_AFTER: "60",
    },
  },
  accounts: 0,
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function log(a: TestAccount, query: Record<string, string | number> = {}) {
  const r = await getJson(fx.s.url, "/v1/account/events", { limit: 1000, ...query }, auth(await idToken(fx.s.url, a)));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { events: any[]; next_cursor: string; has_more: boolean };
}

describe("the event log", () => {
  it("records each change of a conversation and each revocation, in commit order, shaped like the lists", async () => {
    const a = await fx.s.account();
    const token = await idToken(fx.s.url, a);
    const t = await issueTokens(fx.s.url, a, "events-customer");
    const conv = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const body = { conversation_id: conv };
    expect((await postJson(fx.s.url, "/take_over_conversation", body, auth(token))).status).toBe(200);
    expect(
      (await postJson(fx.s.url, "/reply_to_conversation", { ...body, content: "Sam here" }, auth(token))).status,
    ).toBe(200);
    expect((await postJson(fx.s.url, "/mark_conversation_read", body, auth(token))).status).toBe(200);
    expect((await postJson(fx.s.url, "/close_conversation", body, auth(token))).status).toBe(200);
    // Closing a closed conversation changes nothing a reader sees: no event.
    expect((await postJson(fx.s.url, "/close_conversation", body, auth(token))).status).toBe(200);
    await send(fx.s.url, t.access_token, "are you there?", conv); // the customer reopens it
    expect((await postJson(fx.s.url, "/release_conversation", body, auth(token))).status).toBe(200);
    expect(
      (await postJson(fx.s.url, "/v1/account/sessions/revoke", { user_id: "events-customer" }, auth(token))).status,
    ).toBe(200);

    const { events, next_cursor, has_more } = await log(a);
    expect(events.map((e) => e.type)).toEqual([
      "conversation.started",
      "message.created",
      "message.created",
      "conversation.assigned",
      "conversation.activity",
      "message.created",
      "conversation.read",
      "conversation.closed",
      "conversation.activity",
      "conversation.reopened",
      "message.created",
      "conversation.activity",
      "conversation.assigned",
      "conversation.activity",
      "session.revoked",
    ]);
    expect(events.map((e) => e.cursor)).toEqual(events.map((_, i) => String(i + 1)));
    expect(next_cursor).toBe(String(events.length));
    expect(has_more).toBe(false);
    expect(events[0].data).toMatchObject({
      conversation_id: conv,
      chatbot_id: a.chatbotId,
      user_id: "events-customer",
    });
    expect(events[0].data.conversation).toMatchObject({
      conversation_id: conv,
      status: "live",
      assigned_to: "ai_agent",
    });
    expect(events[3].data.conversation).toMatchObject({ assigned_to: a.email, operator_name: expect.any(String) });
    expect(events[4].data.activity).toMatchObject({ kind: "taken_over", actor_email: a.email, from_email: "ai_agent" });
    expect(events[5].data.message).toMatchObject({ role: "operator", content: "Sam here", message_order: 3 });
    expect(events[6].data.conversation.unread_message_count).toBe("0");
    expect(events[7].data.conversation.status).toBe("closed");
    expect(events[8].data.activity).toMatchObject({ kind: "closed", actor_email: a.email });
    expect(events[9].data.conversation.status).toBe("live");
    expect(events[11].data.activity).toMatchObject({ kind: "reopened", actor_email: "", actor_name: "Customer" });
    expect(events[12].data.conversation.assigned_to).toBe("ai_agent");
    expect(events[13].data.activity).toMatchObject({ kind: "released", to_email: "ai_agent" });
    expect(events[14].data).toMatchObject({ user_id: "events-customer", chatbot_id: "", revoked: 1 });
    for (const e of events) {
      expect(e.account_id).toBe(a.accountId);
      expect(Date.parse(e.created_at)).not.toBeNaN();
    }
    // Paging: after a cursor, by type, with a limit.
    const page = await log(a, { after: "3", limit: 2 });
    expect(page.events.map((e) => e.cursor)).toEqual(["4", "5"]);
    expect(page).toMatchObject({ next_cursor: "5", has_more: true });
    const messages = await log(a, { types: "message.created" });
    expect(messages.events.map((e) => e.data.message.content)).toEqual([
      "hello",
      expect.any(String),
      "Sam here",
      "are you there?",
    ]);
    const empty = await log(a, { after: next_cursor });
    expect(empty).toEqual({ events: [], next_cursor, has_more: false });
  });

  it("the same log over Connect", async () => {
    const a = await fx.s.account();
    const t = await issueTokens(fx.s.url, a, "connect-customer");
    await send(fx.s.url, t.access_token, "over connect");
    const r = await fetch(`${fx.s.url}/aiagent.v1.WebhookService/ListEvents`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth(await idToken(fx.s.url, a)) },
      body: JSON.stringify({ types: ["message.created"], limit: 1 }),
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as any;
    expect(body.data.events[0].data.message.content).toBe("over connect");
    expect(body.data.hasMore).toBe(true);
  });

  it("an endpoint failing for longer than AIAGENT_WEBHOOK_DISABLE_AFTER is disabled, and the account told", async () => {
    const a = await fx.s.account();
    const token = await idToken(fx.s.url, a);
    // Nothing listens on port 9: every attempt is refused.
    const ep = await postJson(fx.s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/hooks" }, auth(token));
    const id = ep.body.data.endpoint.endpoint_id;
    const t = await issueTokens(fx.s.url, a, "disable-customer");
    await send(fx.s.url, t.access_token, "nobody listens");
    const endpoint = async () =>
      (await getJson(fx.s.url, "/v1/account/webhooks", {}, auth(await idToken(fx.s.url, a)))).body.data.endpoints[0];
    await eventually("the endpoint failing", async () => (await endpoint()).failing_since !== "");
    // Time passes (the test clock): the next failure finds it failing for over a minute.
    fx.s.clock.advance(61_000);
    await send(fx.s.url, t.access_token, "still nobody", (await log(a)).events[0].data.conversation_id);
    await eventually("the endpoint disabled", async () => (await endpoint()).status === "disabled");
    expect((await endpoint()).disabled_reason).toMatch(/disabled by the service/);
    const disabled = (await log(a, { types: "webhook_endpoint.disabled" })).events;
    expect(disabled).toHaveLength(1);
    expect(disabled[0].data).toMatchObject({ endpoint_id: id, reason: expect.stringContaining("failed since") });
    // Enabled again by the account: its failure record is cleared.
    const on = await fetch(`${fx.s.url}/v1/account/webhooks/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json", ...auth(await idToken(fx.s.url, a)) },
      body: JSON.stringify({ enabled: true }),
    });
    expect(((await on.json()) as any).data).toMatchObject({
      status: "enabled",
      failing_since: "",
      disabled_reason: "",
    });
  });
});

describe("retention", () => {
  it("drops events older than AIAGENT_EVENT_RETENTION_DAYS from the log", async () => {
    const r = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20", AIAGENT_EVENT_RETENTION_DAYS: "1" } });
    try {
      const a = await r.account();
      await send(r.url, (await issueTokens(r.url, a, "old-customer")).access_token, "an old message");
      const list = async () =>
        (await getJson(r.url, "/v1/account/events", {}, auth(await idToken(r.url, a)))).body.data.events as unknown[];
      expect(await list()).toHaveLength(3);
      // Two days on (the test clock): the dispatcher's next hourly pass prunes them.
      r.clock.advance(2 * 86_400_000);
      await eventually("the old events pruned", async () => (await list()).length === 0);
      await send(r.url, (await issueTokens(r.url, a, "new-customer")).access_token, "a new message");
      expect(await list()).toHaveLength(3);
    } finally {
      await r.close(true);
    }
  });
});
