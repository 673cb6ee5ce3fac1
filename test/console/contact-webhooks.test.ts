import type { Browser, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { launchBrowser, newContext } from "../frame/browser.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import type { TestAccount, TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";
import { axeViolations } from "./axe.js";
import { signIn, startConsoleServer } from "./sign-in.js";

// Issue 31: the contact panel beside a conversation, and webhooks managed in the console.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const DOCS = new URL("../../docs/", import.meta.url);

/** The docs' screenshots are written only when asked (UPDATE_DOCS=1), so a test run leaves the checkout as it was. */
async function shot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_DOCS === "1") await page.screenshot({ path: new URL(name, DOCS).pathname });
}

describe.runIf(canRun)("the contact panel and the webhooks page", () => {
  let browser: Browser;
  let s: TestServer;
  let owner: TestAccount;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    [browser, s] = await Promise.all([launchBrowser(), startConsoleServer(), receiver.up()]);
    owner = await s.account();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver.down();
    await s?.close(true);
  });

  test("an admin sees the customer's profile, both conversations and their session; an operator all but sessions", async () => {
    const profile = { contact_name: "Dana Whitlock", email: "dana@example.com", phone_number: "+44 20 7946 0018" };
    const t = await issueTokens(s.url, owner, "dana-42", profile);
    const first = await send(s.url, t.access_token, "My parcel arrived damaged");
    await closeConversation(s, owner, first.conversation_id);
    const rated = await postJson(
      s.url,
      `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`,
      { conversation_id: first.conversation_id, score: 4, comment: "Quick and kind" },
    );
    expect(rated.status, JSON.stringify(rated.body)).toBe(200);
    await send(s.url, t.access_token, "Still waiting for the replacement");

    const context = await newContext(browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await signIn(page, s.url, owner.email, owner.password);
    await page.getByRole("button", { name: /Dana Whitlock/ }).click();
    await page.getByText("Contact details").click();
    const fields = page.getByTestId("contact-fields");
    for (const v of ["Dana Whitlock", "dana@example.com", "+44 20 7946 0018", "dana-42"])
      await fields.getByText(v, { exact: true }).waitFor();
    const convs = page.getByTestId("contact-conversations").getByRole("listitem");
    await expect.poll(() => convs.count()).toBe(2);
    expect(await convs.allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/closed.*rated 4\/5: “Quick and kind”/),
        expect.stringMatching(/live.*\(shown\)/),
      ]),
    );
    const sessions = page.getByTestId("contact-sessions").getByRole("listitem");
    await expect.poll(() => sessions.count()).toBe(1);
    expect(await sessions.first().textContent()).toContain("active");
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, "console-contact-panel.png");
    await context.close();

    const op = await addMember(s.url, await idToken(s.url, owner), `op-${Date.now()}@example.com`, "operator");
    const opContext = await newContext(browser, { width: 375, height: 740 });
    const opPage = await opContext.newPage();
    await signIn(opPage, s.url, op.email, op.password);
    await opPage.getByRole("button", { name: /Dana Whitlock/ }).click();
    await opPage.getByText("Contact details").click();
    await opPage.getByTestId("contact-fields").getByText("dana-42", { exact: true }).waitFor();
    await expect.poll(() => opPage.getByTestId("contact-conversations").getByRole("listitem").count()).toBe(2);
    expect(await opPage.getByRole("heading", { name: "Sessions" }).count()).toBe(0);
    expect(await axeViolations(opPage)).toEqual([]);
    await opContext.close();
  });

  test("an admin adds an endpoint, copies its secret once, sees deliveries, rotates, disables and deletes it", async () => {
    const context = await newContext(browser, { width: 1280, height: 900 });
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    const page = await context.newPage();
    await signIn(page, s.url, owner.email, owner.password);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No endpoints yet").waitFor();
    await page.getByLabel("URL").fill(receiver.url);
    await page.getByLabel("Label (optional)").fill("CRM sync");
    await page.getByLabel("conversation.started").check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.getByTestId("webhook-secret-value").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Copy the secret" }).click();
    await page.getByText("Copied").waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const card = page.getByTestId("webhook-endpoint");
    expect(await card.getByTestId("webhook-status").textContent()).toBe("enabled");
    expect(await card.textContent()).toContain("conversation.started");

    // A conversation starts: the delivery is signed with the secret shown, and listed on the page.
    await send(s.url, (await issueTokens(s.url, owner, "hooked")).access_token, "hello");
    await eventually("a delivery", () => receiver.accepted().length >= 1);
    const d = receiver.accepted()[0]!;
    expect(() => new Webhook(secret).verify(d.body, d.headers as Record<string, string>)).not.toThrow();
    await card.getByRole("button", { name: "Deliveries" }).click();
    await expect
      .poll(async () => {
        await card.getByRole("button", { name: "Hide deliveries" }).click();
        await card.getByRole("button", { name: "Deliveries" }).click();
        return card
          .getByTestId("webhook-deliveries")
          .textContent({ timeout: 2000 })
          .catch(() => "");
      })
      .toContain("delivered");
    expect(await axeViolations(page)).toEqual([]);
    await page.evaluate(() => scrollTo(0, 0));
    await shot(page, "console-webhooks.png");

    // The secret is gone once dismissed, and never in the list again.
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(secret);
    page.on("dialog", (dialog) => void dialog.accept());
    await card.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = (await page.getByTestId("webhook-secret-value").textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);

    await card.getByRole("button", { name: "Disable" }).click();
    await expect.poll(() => card.getByTestId("webhook-status").textContent()).toBe("disabled");
    await card.getByRole("button", { name: "Delete" }).click();
    await page.getByText("No endpoints yet").waitFor();
    await context.close();
  });
});

/** Closes a conversation through the operators' JSON route, so the customer's next message starts another. */
async function closeConversation(s: TestServer, a: TestAccount, conversationId: string): Promise<void> {
  const token = await idToken(s.url, a);
  const r = await postJson(
    s.url,
    "/close_conversation",
    { conversation_id: conversationId },
    { authorization: `Bearer ${token}` },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}
