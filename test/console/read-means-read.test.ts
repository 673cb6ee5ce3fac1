import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { newContext } from "../frame/browser.js";
import { type ConsoleRun, consoleOnBothBackends } from "../helpers/console-instances.js";
import { contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 45, read means read: opening a conversation in the console reads it for the account, as a customer message
// arriving while it is open does; "Mark unread" brings the badge back; the tab's title count follows. Once on one
// SQLite instance, once on two over one PostgreSQL database (the customer on the first, the console on the second).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const runs = await consoleOnBothBackends(canRun);

/** The contact's unread count as the account API lists it. */
async function unreadOf(run: ConsoleRun, name: string): Promise<string> {
  const r = await contacts(run.one, await idToken(run.one, run.account), run.account.email);
  const c = r.body.data.data.contacts.find((x: { contact_name: string }) => x.contact_name === name);
  return c.unread_message_count;
}

/** Waits until the account API lists the contact with this unread count. */
async function untilUnread(run: ConsoleRun, name: string, want: string): Promise<void> {
  for (let i = 0; ; i++) {
    const got = await unreadOf(run, name);
    if (got === want) return;
    if (i > 200) throw new Error(`${name}: unread ${got}, expected ${want}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const titleIs = (page: Page, title: string) => page.waitForFunction((t) => document.title === t, title);

describe.runIf(canRun)("read means read", () => {
  runs.twice(
    "opening reads, a message arriving while open is read, Mark unread brings the badge back, the title follows",
    async (r) => {
      const t = await issueTokens(r.one, r.account, "reader-1", { contact_name: "Ada Lovelace" });
      const first = await send(r.one, t.access_token, "Is my parcel on its way?");
      await send(r.one, t.access_token, "It was due yesterday.", first.conversation_id);

      const context = await newContext(r.browser, { width: 1280, height: 800 });
      const page = await context.newPage();
      await signIn(page, r.two, r.account.email, r.account.password);
      const row = page.locator(".contact", { hasText: "Ada Lovelace" });
      await row.getByTestId("unread-badge").filter({ hasText: "2" }).waitFor();

      // A new customer message while the inbox is open: the tab's title counts it.
      await send(r.one, t.access_token, "Hello?", first.conversation_id);
      await titleIs(page, "(1) Inbox · aiagent console");
      await row.getByTestId("unread-badge").filter({ hasText: "3" }).waitFor();

      // Opening it reads it: the badge goes, the account's count is 0, the title stops counting.
      await row.click();
      await page.locator(".message--user", { hasText: "Hello?" }).waitFor();
      await row.getByTestId("unread-badge").waitFor({ state: "detached" });
      await titleIs(page, "aiagent console");
      expect(await unreadOf(r, "Ada Lovelace")).toBe("0");

      // A message arriving while it is open is read as it arrives.
      await send(r.one, t.access_token, "Still there?", first.conversation_id);
      await page.locator(".message--user", { hasText: "Still there?" }).waitFor();
      await untilUnread(r, "Ada Lovelace", "0");
      await titleIs(page, "aiagent console");
      expect(await row.getByTestId("unread-badge").count()).toBe(0);
      expect(await axeViolations(page)).toEqual([]);

      // Mark unread: back to the list, the latest customer message unread again.
      await page.getByRole("button", { name: "Mark unread" }).click();
      await row.getByTestId("unread-badge").filter({ hasText: "1" }).waitFor();
      expect(await unreadOf(r, "Ada Lovelace")).toBe("1");
      expect(await page.getByText("Choose a contact to read their conversation.").isVisible()).toBe(true);

      // At 375 px too: opening reads it.
      await page.setViewportSize({ width: 375, height: 800 });
      await row.click();
      await page.getByRole("button", { name: "Mark unread" }).waitFor();
      await untilUnread(r, "Ada Lovelace", "0");
      expect(await axeViolations(page)).toEqual([]);
      await context.close();
    },
    scaled(180_000),
  );
});
