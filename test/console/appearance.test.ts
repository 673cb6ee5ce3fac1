import { describe, expect, test } from "vitest";
import { chatFrame, newContext } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { axeViolations } from "./axe.js";
import { openAppearancePage } from "./sign-in.js";

// Issue 32, items 2 and 3: an admin sets the chatbot's brand color, agent name, greeting and office hours in the
// console, sees a live preview and a warning for a color too faint to see; the customer's frame then shows them, and
// outside the hours (on the server's test clock) says when the team is back.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);

describe.runIf(canRun)("a chatbot's appearance and office hours", () => {
  test("set in the console with a live preview, they are what the customer's frame shows, in and out of hours", async () => {
    // Wednesday 25 November 2026, 10:00 in Berlin.
    fx.e.service.clock.freezeAt(Date.parse("2026-11-25T09:00:00Z"));
    const { context: admin, page } = await openAppearancePage(fx.browser, fx.e);

    // A color too faint against the chat's white background is flagged as it is chosen.
    await page.getByLabel("Brand color").fill("#f4f4f4");
    await page.getByRole("alert").filter({ hasText: "Low contrast" }).waitFor();
    await page.getByLabel("Brand color").fill("#0a7d3b");
    await page.getByText("its text is white").waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.getByLabel("Agent name").fill("Ava");
    await page.getByLabel("Greeting", { exact: true }).fill("Welcome to the shop!");
    await page.getByLabel(/only at these times/).check();
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    // The preview follows, unsaved.
    const preview = page.getByRole("figure", { name: "Preview" });
    await preview.getByText("Welcome to the shop!").waitFor();
    expect(await preview.locator(".preview__bubble").evaluate((b) => getComputedStyle(b).backgroundColor)).toBe(
      "rgb(10, 125, 59)",
    );
    await page.getByRole("button", { name: "Save appearance" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    if (process.env.UPDATE_DOCS === "1")
      await page.screenshot({
        path: new URL("../../docs/console-appearance.png", import.meta.url).pathname,
        fullPage: true,
      });
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await axeViolations(page)).toEqual([]);
    await admin.close();

    // The customer's frame, during office hours: the color, the name, the greeting; no away line.
    const customer = await newContext(fx.browser);
    const shop = await customer.newPage();
    await shop.goto(`${fx.e.host.url}/`);
    let frame = await chatFrame(shop);
    expect(await frame.locator("#avatar").evaluate((a) => getComputedStyle(a).backgroundColor)).toBe(
      "rgb(10, 125, 59)",
    );
    expect(await frame.locator("#title").textContent()).toBe("Ava");
    expect(await frame.locator("#empty").textContent()).toBe("Welcome to the shop!");
    expect(await frame.locator("#away").isHidden()).toBe(true);

    // Saturday: the frame says the team is back on Monday (at 09:00 Berlin time), and the chat still works.
    fx.e.service.clock.freezeAt(Date.parse("2026-11-28T12:00:00Z"));
    await shop.reload();
    frame = await chatFrame(shop);
    const away = frame.locator("#away");
    await away.waitFor();
    expect(await away.textContent()).toMatch(/away until Monday.*9:00.*a person will follow up/);
    expect(await frame.locator("#input").isEnabled()).toBe(true);
    await customer.close();
  });
});
