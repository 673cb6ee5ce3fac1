import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { newContext } from "../frame/browser.js";
import { type ConsoleRun, consoleOnBothBackends } from "../helpers/console-instances.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 45 in Chromium: a conversation snoozed from its Snooze menu leaves the live view, shows until when, and comes
// back when its time passes (the test clock moves; the periodic check runs at once); a chatbot's first-response SLA
// shows the time left, then the breach, which a webhook receives. Once on one SQLite instance, once on two
// instances over one PostgreSQL database: the API calls and the periodic check on the first, the console on the
// second.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const runs = await consoleOnBothBackends(canRun);

const overflows = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe.runIf(canRun)("snooze and the first-response SLA in the console", () => {
  runs.twice(
    "snoozed for an hour from its menu: out of Live, shown as snoozed, back once its time passed",
    async (r: ConsoleRun) => {
      const t = await issueTokens(r.one, r.account, "snoozed-1", { contact_name: "Ada Lovelace" });
      await send(r.one, t.access_token, "I will write back with the photos");

      const context = await newContext(r.browser, { width: 1280, height: 800 });
      const page = await context.newPage();
      await signIn(page, r.two, r.account.email, r.account.password);
      const ada = page.locator(".contact", { hasText: "Ada Lovelace" });
      const conversationId = (await ada.getAttribute("data-conversation-id")) ?? "";
      await ada.click();
      await page.getByRole("button", { name: "Snooze", exact: true }).click();
      await page.getByRole("button", { name: "1 hour" }).click();
      await page.getByTestId("snoozed-until").waitFor();
      await page.getByTestId("activity").filter({ hasText: "snoozed" }).first().waitFor();
      await page.getByRole("button", { name: "Live", exact: true }).click();
      await page.getByText("No contacts match.").waitFor();
      await page.getByRole("button", { name: "Snoozed", exact: true }).click();
      await ada.getByTestId("contact-snoozed").waitFor();
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);

      // Its time passes (moved to a minute ahead through the API, so the session outlives the wait): the periodic check
      // wakes it, and the live list shows it again.
      const auth = { authorization: `Bearer ${await idToken(r.one, r.account)}` };
      const soon = new Date(r.clock.now() + 60_000).toISOString();
      await postJson(r.one, "/snooze_conversation", { conversation_id: conversationId, snoozed_until: soon }, auth);
      r.clock.advance(61_000);
      await r.app.timers.check();
      await page.getByRole("button", { name: "Live", exact: true }).click();
      await ada.waitFor();
      await ada.getByTestId("contact-snoozed").waitFor({ state: "detached" });
      const lines = await getJson(r.one, "/list_conversation_activity", { conversation_id: conversationId }, auth);
      expect(lines.body.data.activities.map((x: { kind: string }) => x.kind)).toContain("unsnoozed");
      await context.close();
    },
    scaled(120_000),
  );

  runs.twice(
    "an SLA's time left on a waiting conversation, then its breach, shown and sent as a webhook",
    async (r: ConsoleRun) => {
      const receiver = new WebhookReceiver();
      await receiver.up();
      try {
        const auth = { authorization: `Bearer ${await idToken(r.one, r.account)}` };
        await requestJson(r.one, "PATCH", `/v1/account/chatbots/${r.account.chatbotId}`, auth, {
          first_response_sla_minutes: 5,
        });
        const hook = await postJson(
          r.one,
          "/v1/account/webhooks",
          { url: receiver.url, event_types: ["conversation.sla_breached"] },
          auth,
        );
        expect(hook.status).toBe(200);
        const t = await issueTokens(r.one, r.account, "sla-1", { contact_name: "Grace Hopper" });
        const sent = await send(r.one, t.access_token, "Is my order lost?");
        await postJson(r.one, "/take_over_conversation", { conversation_id: sent.conversation_id }, auth);

        const context = await newContext(r.browser, { width: 1280, height: 800 });
        const page = await context.newPage();
        await signIn(page, r.two, r.account.email, r.account.password);
        const grace = page.locator(".contact", { hasText: "Grace Hopper" });
        await grace.getByTestId("sla").filter({ hasText: "min left" }).waitFor();

        r.clock.advance(6 * 60_000);
        await r.app.timers.check();
        await page.reload();
        await grace.getByTestId("sla").filter({ hasText: "SLA breached" }).waitFor();
        await grace.click();
        await page.locator(".snooze").getByTestId("sla").filter({ hasText: "SLA breached" }).waitFor();
        await eventually("the breach's webhook", () =>
          receiver.received.some((d) => d.body.includes("conversation.sla_breached")),
        );
        const delivered = receiver.received.find((d) => d.body.includes("conversation.sla_breached"))!;
        expect(JSON.parse(delivered.body).data.conversation_id).toBe(sent.conversation_id);
        expect(await axeViolations(page)).toEqual([]);
        await page.setViewportSize({ width: 375, height: 800 });
        expect(await axeViolations(page)).toEqual([]);
        expect(await overflows(page)).toBe(false);
        await context.close();
      } finally {
        await receiver.down();
      }
    },
    scaled(120_000),
  );
});
