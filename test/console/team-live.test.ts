import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { discPng } from "../helpers/png.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { notifiedPage, signIn, teammateAndCustomer } from "./sign-in.js";

// Issue 31, team features part B (docs/inbox.md): typing indicators both ways, the operator's uploaded picture in
// the customer's frame, and a desktop notification with "(N) Inbox" in the console's title for a new message.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);
const PARCEL = "My parcel arrived damaged, can a person help?";

/** Serious and critical violations at 1280 px and at 375 px. */
async function axeBothWidths(page: Page): Promise<string[]> {
  const found = await axeViolations(page);
  await page.setViewportSize({ width: 375, height: 740 });
  found.push(...(await axeViolations(page)));
  await page.setViewportSize({ width: 1280, height: 800 });
  return found;
}

describe.runIf(canRun)("typing, the operator's picture and new-message alerts", () => {
  test(
    "the customer sees the operator typing, then their name and picture; the operator sees the customer typing and is alerted",
    async () => {
      // A teammate joins; the customer writes in the client's page.
      const {
        member,
        context: customer,
        page: shop,
        frame,
      } = await teammateAndCustomer(fx, "pat@shop.example", PARCEL);

      // The operator, with notifications allowed by the browser, names themself and uploads a picture.
      const ops = await newContext(fx.browser, { width: 1280, height: 800 });
      // Records the notifications the console raises (headless Chromium shows none on screen).
      const page = await notifiedPage(ops, fx.e.service.url);
      await signIn(page, fx.e.service.url, member.email, member.password);
      await page.getByRole("link", { name: "My settings" }).click();
      await page.getByLabel("Display name").fill("Pat Lee");
      await page.getByRole("button", { name: "Save name" }).click();
      await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
      // Not an image: refused, naming the field.
      await page.locator("#picture-file").setInputFiles({
        name: "pat.png",
        mimeType: "image/png",
        buffer: Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"),
      });
      await page.getByRole("alert").filter({ hasText: "image" }).waitFor();
      await page.locator("#picture-file").setInputFiles({ name: "pat.png", mimeType: "image/png", buffer: discPng() });
      await page.getByTestId("my-picture").waitFor();
      await page.getByLabel("Desktop notifications").check();
      await page.getByLabel("A short sound").check();
      expect(await axeBothWidths(page)).toEqual([]);

      // Take over: the customer sees the name and the picture in "has joined the conversation" and the header.
      await page.getByRole("link", { name: "Inbox" }).click();
      // The list names the conversation's chatbot for an operator too, who may not list the account's chatbots
      // (issue 45): the name comes with the list's row.
      await page
        .locator(".contact")
        .first()
        .getByTestId("contact-chatbot")
        .filter({ hasText: /^Shop assistant$/ })
        .waitFor();
      await page.locator(".contact").first().click();
      await page.getByRole("button", { name: "Take over" }).click();
      const joined = frame.locator(".msg--event", {
        hasText: "Pat Lee from Shop assistant has joined the conversation.",
      });
      await joined.waitFor();
      await joined.locator("img.pic").waitFor();
      await frame.locator("#avatar img.pic").waitFor();

      // The operator types: the customer sees it; the reply then shows with the operator's name and picture.
      const reply = page.getByLabel(/^Reply to/);
      await reply.pressSequentially("Hi, I'm Pat. ", { delay: 20 });
      await frame.locator("#typing", { hasText: "Pat Lee is typing…" }).waitFor();
      await reply.pressSequentially("A replacement is on its way.", { delay: 0 });
      await page.getByRole("button", { name: "Send" }).click();
      const answer = frame.locator(".msg--operator").last();
      await answer.locator(".msg__who", { hasText: "Pat Lee" }).waitFor();
      const pic = answer.locator("img.pic");
      await pic.waitFor();
      expect(await pic.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
      await frame.locator("#typing").waitFor({ state: "hidden" });
      expect(await axeViolations(frame)).toEqual([]);

      // The customer types: the operator sees it under the conversation.
      const input = frame.getByRole("textbox");
      await input.click();
      await input.pressSequentially("Thank you, ", { delay: 20 });
      await page.getByTestId("customer-typing").filter({ hasText: "is typing…" }).waitFor();
      expect(await axeBothWidths(page)).toEqual([]);

      // The customer sends: a desktop notification. The conversation is open on a visible tab, so it is read as it
      // arrives (issue 45): the title's count clears by itself (read-means-read.test.ts counts one for a closed one).
      await input.pressSequentially("that is quick!", { delay: 0 });
      await input.press("Enter");
      await page.waitForFunction(() => (window as unknown as { __notes: unknown[] }).__notes.length === 1);
      const notes = await page.evaluate(() => (window as unknown as { __notes: { body: string }[] }).__notes);
      expect(notes).toEqual([{ title: "New customer message", body: "Thank you, that is quick!" }]);
      await page.getByTestId("customer-typing").filter({ hasText: /^$/ }).waitFor();

      // docs/: the customer's frame with the operator's name and picture, written only when asked (UPDATE_DOCS=1).
      if (process.env.UPDATE_DOCS === "1")
        await shop.locator("#aiagent-chat").screenshot({
          path: new URL("../../docs/frame-operator-picture.png", import.meta.url).pathname,
          animations: "disabled",
        });

      await page.getByRole("button", { name: "Mark unread" }).waitFor();
      await page.waitForFunction(() => !document.title.startsWith("("));
      await ops.close();
      await customer.close();
    },
    scaled(90_000),
  );
});
