import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { docShot } from "./doc-shot.js";
import { signIn } from "./sign-in.js";

// Issue 45's console bugs: at 1280 px the top bar is one row (Sign out included); at 375 px it is one short row with a
// Menu button; the Profile page has no picture-address field; the chatbot's Name and the webhook URL say what is
// true. Screenshots for docs/console.md (written with UPDATE_DOCS=1).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleForFile(canRun);

/** The top bar's height, and how far below its top the Sign out button sits. */
async function bar(page: Page) {
  const header = (await page.locator("header.topbar").boundingBox())!;
  const out = await page.getByRole("button", { name: "Sign out" }).boundingBox();
  return { height: header.height, signOutTop: out ? out.y - header.y : -1 };
}

/** A console page at 1280 px, signed in as the account's owner. */
async function ownerAt1280() {
  const context = await newContext(fx.browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
  return { context, page };
}

const overflows = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe.runIf(canRun)("the console's layout", () => {
  test(
    "one row at 1280 px; a Menu button and a short bar at 375 px; nothing overflows; axe finds nothing serious",
    async () => {
      const { context, page } = await ownerAt1280();

      await docShot(page.locator("header.topbar"), "console-topbar-1280.png");
      const wide = await bar(page);
      expect(wide.height).toBeLessThan(64);
      expect(wide.signOutTop).toBeGreaterThanOrEqual(0);
      expect(wide.signOutTop).toBeLessThan(20);
      expect(await page.getByRole("button", { name: "Menu" }).isVisible()).toBe(false);
      expect(await overflows(page)).toBe(false);

      // The pages this issue touched, at both widths.
      for (const width of [1280, 375]) {
        await page.setViewportSize({ width, height: 800 });
        for (const path of ["inbox", "profile", "teams", "webhooks", `chatbots/${fx.owner.chatbotId}`]) {
          await page.goto(`${fx.s.url}/console/${path}`);
          await page.locator("main h1").first().waitFor();
          expect(await overflows(page), `${path} at ${width}`).toBe(false);
          expect(await axeViolations(page), `${path} at ${width}`).toEqual([]);
        }
      }

      // 375 px: one short row, the pages behind Menu; choosing one closes it.
      await page.goto(`${fx.s.url}/console/inbox`);
      await page.getByRole("heading", { name: "Inbox" }).waitFor();
      const narrow = (await page.locator("header.topbar").boundingBox())!;
      expect(narrow.height).toBeLessThan(64);
      const menu = page.getByRole("button", { name: "Menu" });
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(false);
      await docShot(page, "console-phone-bar.png");
      await menu.click();
      expect(await menu.getAttribute("aria-expanded")).toBe("true");
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await docShot(page, "console-phone-menu.png");
      await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Team" }).click();
      await page.getByRole("heading", { name: "Team", exact: true }).waitFor();
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      await context.close();
    },
    scaled(240_000),
  );

  test(
    "the Profile page offers the upload only; the chatbot's Name and the webhook URL say what is true",
    async () => {
      const { context, page } = await ownerAt1280();
      await page.goto(`${fx.s.url}/console/profile`);
      await page.getByLabel("Display name").waitFor();
      expect(await page.getByLabel(/https address/).count()).toBe(0);
      await page.getByLabel("Display name").fill("Sam Lee");
      await page.getByRole("button", { name: "Save name" }).click();
      await page.getByText("Saved.").waitFor();

      await page.goto(`${fx.s.url}/console/chatbots/${fx.owner.chatbotId}`);
      await page.getByLabel("Name").first().waitFor();
      expect(await page.getByText("Shown at the top of the chat.").count()).toBe(0);
      await page.getByText("the chat's header shows the appearance's agent name").waitFor();

      await page.goto(`${fx.s.url}/console/webhooks`);
      await page.getByText("http on localhost too, e.g. http://127.0.0.1:9000/hook").waitFor();
      await context.close();
    },
    scaled(120_000),
  );
});
