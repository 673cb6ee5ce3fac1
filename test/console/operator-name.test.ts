import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { signIn, teammateAndCustomer } from "./sign-in.js";

// Issue 31, item 7: an operator sets the name (and picture) customers see; the console's take-over sends it, so the
// customer no longer sees the local part of the operator's e-mail.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);
const PARCEL = "My parcel arrived damaged, can a person help?";

describe.runIf(canRun)("the operator's display name", () => {
  test(
    "set in the console, it is what the customer sees when that operator takes over",
    async () => {
      // A teammate joins; the customer writes in the client's page.
      const {
        member,
        context: customer,
        page: shop,
        frame,
      } = await teammateAndCustomer(fx, "lead@shop.example", PARCEL);

      // The operator names themself, with a picture; a bad picture address is refused, naming the field.
      const console_ = await newContext(fx.browser, { width: 1280, height: 800 });
      const page = await console_.newPage();
      await signIn(page, fx.e.service.url, member.email, member.password);
      await page.getByRole("link", { name: "My settings" }).click();
      await page.getByLabel("Display name").fill("Sam Carter");
      // No picture address (issue 45): customers see the uploaded picture only.
      expect(await page.getByLabel(/https address/).count()).toBe(0);
      await page.getByRole("button", { name: "Save name" }).click();
      await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      // Issue 45: an operator turns off their own SLA e-mail here too (on by default), and the mentions' e-mail.
      const slaMail = page.getByLabel(/E-mail me when a conversation I hold/);
      const mentionMail = page.getByLabel("E-mail me when a teammate mentions me in a note");
      expect(await slaMail.isChecked()).toBe(true);
      await slaMail.uncheck();
      await mentionMail.uncheck();
      await page.getByRole("button", { name: "Save alerts" }).click();
      await page.getByRole("status").filter({ hasText: "Saved." }).nth(1).waitFor();

      // Take over from the inbox: the customer sees the name, in the log and the header.
      await page.getByRole("link", { name: "Inbox" }).click();
      await page.locator(".contact").first().click();
      await page.getByRole("button", { name: "Take over" }).click();
      await frame
        .locator(".msg--event", { hasText: "Sam Carter from Shop assistant has joined the conversation." })
        .waitFor();
      await frame.locator("#title", { hasText: /^Sam Carter$/ }).waitFor();
      expect(await frame.locator("#title").textContent()).not.toBe("lead");

      // docs/inbox.md's screenshots, written only when asked (UPDATE_DOCS=1): the inbox at 1280 px and on a phone.
      if (process.env.UPDATE_DOCS === "1") {
        await page
          .getByLabel(/^Reply to/)
          .fill("Hi, I'm Sam. I'm sorry about the parcel: a replacement is on its way.");
        await page.getByRole("button", { name: "Send" }).click();
        await frame.locator(".msg--operator").waitFor();
        const docs = (name: string) => new URL(`../../docs/${name}`, import.meta.url).pathname;
        await page.screenshot({ path: docs("inbox-taken-over.png") });
        await page.setViewportSize({ width: 375, height: 740 });
        await page.screenshot({ path: docs("inbox-phone.png"), fullPage: true });
        await page.setViewportSize({ width: 1280, height: 800 });
        await shop
          .locator("#aiagent-chat")
          .screenshot({ path: docs("frame-operator-name.png"), animations: "disabled" });
      }

      // Signed in again later, the name is still theirs.
      await page.reload();
      await page.getByRole("link", { name: "My settings" }).click();
      expect(await page.getByLabel("Display name").inputValue()).toBe("Sam Carter");
      expect(await page.getByLabel(/E-mail me when a conversation I hold/).isChecked()).toBe(false);
      await expect
        .poll(() => page.getByLabel("E-mail me when a teammate mentions me in a note").isDisabled())
        .toBe(false);
      expect(await page.getByLabel("E-mail me when a teammate mentions me in a note").isChecked()).toBe(false);
      // The Mentions page's box says the same.
      await page.getByRole("link", { name: /^Mentions/ }).click();
      await expect.poll(() => page.locator("#mention-email").isDisabled()).toBe(false);
      expect(await page.locator("#mention-email").isChecked()).toBe(false);
      await console_.close();
      await customer.close();
    },
    scaled(60_000),
  );
});
