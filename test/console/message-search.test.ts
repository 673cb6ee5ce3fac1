import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleOnBothBackends } from "../helpers/console-instances.js";
import { issueTokens, send } from "../helpers/flows.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { docShot } from "./doc-shot.js";
import { signIn } from "./sign-in.js";

// Issue 45, search across messages: the customer who mentioned order A-1001 last week is found from the inbox's
// search box by those words, the words marked in the result; the contact list shows each contact's last message. Once
// on one SQLite instance, once on two over one PostgreSQL database (written on the first, searched on the second).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const runs = await consoleOnBothBackends(canRun);
const DAY = 86_400_000;

const overflows = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe.runIf(canRun)("search across messages in the console", () => {
  runs.twice(
    "a word from last week finds the message, highlighted; opening it opens the conversation",
    async (r) => {
      r.clock.freezeAt(Date.now() - 7 * DAY);
      try {
        const t = await issueTokens(r.one, r.account, "searched-1", { contact_name: "Ada Lovelace" });
        await send(r.one, t.access_token, "Où est ma commande A-1001? Elle devait arriver <b>lundi</b>.");
      } finally {
        // Back to the real time (resume alone would run on from a week ago).
        r.clock.freezeAt(Date.now());
        r.clock.resume();
      }
      const other = await issueTokens(r.one, r.account, "searched-2", { contact_name: "Grace Hopper" });
      await send(r.one, other.access_token, "Do you ship to Canada?");

      const context = await newContext(r.browser, { width: 1280, height: 800 });
      const page = await context.newPage();
      await signIn(page, r.two, r.account.email, r.account.password);
      // The list shows each contact's last message.
      const grace = page.locator(".contact", { hasText: "Grace Hopper" });
      await grace.getByTestId("contact-preview").waitFor();

      await page.getByLabel("Search messages and notes").fill("commande a-1001");
      const hit = page.getByTestId("search-hit").filter({ hasText: "Ada Lovelace" }).first();
      await hit.waitFor();
      expect(await hit.locator("mark").allTextContents()).toEqual(["commande", "A", "1001"]);
      // The message's markup is text, not markup.
      expect(await hit.locator("b").count()).toBe(0);
      expect(await hit.textContent()).toContain("<b>lundi</b>");
      expect(await page.getByTestId("search-hit").filter({ hasText: "Grace Hopper" }).count()).toBe(0);

      // Accents and case folded: "COMMANDE" and "ou est" find it too; a filter for closed conversations does not.
      await page.getByLabel("Search messages and notes").fill("OU EST");
      await page
        .getByTestId("search-hit")
        .filter({ hasText: "Ada Lovelace" })
        .locator("mark", { hasText: "Où" })
        .waitFor();
      await page.getByLabel("Status").selectOption("closed");
      await page.getByText("No message or note matches.").waitFor();
      await page.getByLabel("Status").selectOption("");
      await hit.waitFor();
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      await docShot(page, "inbox-search.png");

      await hit.click();
      await page.locator(".message--user", { hasText: "A-1001" }).waitFor();

      await page.setViewportSize({ width: 375, height: 800 });
      await page.getByRole("button", { name: "← Contacts" }).click();
      await hit.waitFor();
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      await docShot(page, "inbox-search-phone.png");

      // Emptying the box brings the contact list back.
      await page.getByLabel("Search messages and notes").fill("");
      await grace.waitFor();
      await context.close();
    },
    scaled(120_000),
  );

  runs.twice(
    "a label made, put on a conversation, a priority set, both on its timeline, and the search filtered by the label",
    async (r) => {
      for (const [user, name] of [
        ["labeled-1", "Linus Pauling"],
        ["labeled-2", "Lise Meitner"],
      ]) {
        const t = await issueTokens(r.one, r.account, user!, { contact_name: name! });
        await send(r.one, t.access_token, `My invoice is wrong, says ${name}`);
      }
      const context = await newContext(r.browser, { width: 1280, height: 800 });
      const page = await context.newPage();
      await signIn(page, r.two, r.account.email, r.account.password);
      await page.locator(".contact", { hasText: "Linus Pauling" }).click();
      await page.getByRole("button", { name: "Labels", exact: true }).click();
      // The owner is an admin: a new label from the menu, then put on.
      await page.getByLabel("New label").fill("Billing");
      await page.getByRole("button", { name: "Add", exact: true }).click();
      await page.getByRole("checkbox", { name: "Billing" }).click();
      await page.getByTestId("label-chip").filter({ hasText: "Billing" }).waitFor();
      await page.getByTestId("activity").filter({ hasText: "changed the labels: +Billing" }).waitFor();
      await page.getByLabel("Priority").selectOption("urgent");
      await page.getByTestId("activity").filter({ hasText: "changed the priority: none → urgent" }).waitFor();
      // The list marks it, in words a screen reader names, on one line; the other contact has no mark.
      const mark = page.locator(".contact", { hasText: "Linus Pauling" }).getByTestId("contact-priority");
      await expect.poll(() => mark.textContent()).toBe("Priority: Urgent");
      expect(await page.locator(".contact", { hasText: "Lise Meitner" }).getByTestId("contact-priority").count()).toBe(
        0,
      );
      const oneLine = () => mark.evaluate((e) => e.getClientRects().length === 1 && e.scrollWidth <= e.clientWidth + 1);
      expect(await oneLine()).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      await docShot(page, "inbox-labels.png");

      // The search for both customers' words, then only the labeled conversation's.
      await page.getByLabel("Search messages and notes").fill("invoice");
      await page.getByTestId("search-hit").filter({ hasText: "Lise Meitner" }).waitFor();
      await page.getByRole("combobox", { name: /^Label/ }).selectOption({ label: "Billing" });
      await page.getByTestId("search-hit").filter({ hasText: "Lise Meitner" }).waitFor({ state: "detached" });
      await page.getByTestId("search-hit").filter({ hasText: "Linus Pauling" }).waitFor();
      expect(await overflows(page)).toBe(false);
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      // At 375 px the list alone: the mark on one line, nothing overflowing.
      await page.goto(`${r.two}/console`);
      await expect.poll(() => mark.textContent()).toBe("Priority: Urgent");
      expect(await oneLine()).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      await context.close();
    },
    scaled(120_000),
  );
});
