import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { axeViolations } from "../console/axe.js";
import { signIn, startConsoleAndFrame } from "../console/sign-in.js";
import { contacts, idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, newContext, typeMessage } from "./browser.js";
import type { Embedding } from "./fixtures.js";

// Issue 32, item 4: when the team closes a conversation the customer's frame asks how it went; the rating reaches the
// console (the event log and the webhook are in test/api/rating.test.ts).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

let browser: Browser;
let e: Embedding;
let stop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!canRun) return;
  ({ browser, e, stop } = await startConsoleAndFrame());
});
afterAll(async () => {
  await stop?.();
});

describe.runIf(canRun)("how did it go?", () => {
  test("the frame asks for a rating when the conversation closes; the console shows it", async () => {
    const customer = await newContext(browser);
    const shop = await customer.newPage();
    await shop.goto(`${e.host.url}/`);
    const frame = await chatFrame(shop);
    await typeMessage(frame, "Can I return an item?");
    await frame.locator(".msg--assistant").first().waitFor();

    const token = await idToken(e.service.url, e.account);
    const auth = { authorization: `Bearer ${token}` };
    const id = (await contacts(e.service.url, token, e.account.email)).body.data.data.contacts[0]
      .latest_conversation_id as string;
    expect((await postJson(e.service.url, "/close_conversation", { conversation_id: id }, auth)).status).toBe(200);

    const prompt = frame.getByRole("group", { name: "How did it go?" });
    await prompt.waitFor();
    expect(await axeViolations(shop)).toEqual([]);
    await prompt.getByLabel("5 · Very good").check();
    await prompt.getByLabel("Comment (optional)").fill("Clear answer, thanks!");
    await prompt.getByRole("button", { name: "Send rating" }).click();
    await frame.getByText("Thank you for your rating (5 of 5).").waitFor();
    await customer.close();

    const operator = await newContext(browser, { width: 1280, height: 800 });
    const page = await operator.newPage();
    await signIn(page, e.service.url, e.account.email, e.account.password);
    await page.locator(".contact").first().click();
    const note = page.getByTestId("conversation-rating");
    await note.waitFor();
    expect(await note.textContent()).toBe("Rated 5 of 5 by the customer: “Clear answer, thanks!”");
    await operator.close();
  });
});
