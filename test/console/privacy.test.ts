import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { issueTokens, send } from "../helpers/flows.js";
import type { TestAccount } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { axeViolations } from "./axe.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const DOCS = new URL("../../docs/", import.meta.url);

/** The README's screenshots are written only when asked (UPDATE_DOCS=1), so a test run leaves the checkout as it was. */
async function shot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_DOCS === "1") await page.screenshot({ path: new URL(name, DOCS).pathname, fullPage: true });
}

async function signIn(page: Page, base: string, a: TestAccount): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("E-mail").fill(a.email);
  await page.getByLabel("Password").fill(a.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Inbox" }).waitFor();
}

describe.runIf(canRun)("erasure and the audit log in the console", () => {
  const fx = consoleForFile();

  test("an admin erases a contact after confirming, and the audit log page shows it", async () => {
    const t = await issueTokens(fx.s.url, fx.owner, "console-erased", { contact_name: "Robin Vale" });
    await send(fx.s.url, t.access_token, "Please delete my data.");
    const context = await newContext(fx.browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await signIn(page, fx.s.url, fx.owner);
    await page.getByRole("button", { name: /Robin Vale/ }).click();
    await page.getByRole("heading", { name: "Robin Vale" }).waitFor();

    // Dismissed: nothing happens.
    page.once("dialog", (d) => void d.dismiss());
    await page.getByRole("button", { name: "Erase contact" }).click();
    await page.getByRole("heading", { name: "Robin Vale" }).waitFor();
    expect(await fx.s.app.store.privacy.contact(fx.owner.accountId, { userId: "console-erased" })).toBeDefined();

    // Confirmed: the contact is gone from the list and from storage.
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.getByRole("button", { name: "Erase contact" }).click();
    await page.getByRole("button", { name: /Robin Vale/ }).waitFor({ state: "detached" });
    expect(asked).toContain("cannot be undone");
    expect(await fx.s.app.store.privacy.contact(fx.owner.accountId, { userId: "console-erased" })).toBeUndefined();

    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const table = page.getByTestId("audit-events");
    await table.getByText("contact.erased").waitFor();
    await table.getByText("sign_in.succeeded").first().waitFor();
    expect(await axeViolations(page), "audit log page").toEqual([]);
    await shot(page, "console-audit.png");

    // Filtered by kind.
    await page.getByLabel("Kind").selectOption("contact.erased");
    await table.getByText("sign_in.succeeded").first().waitFor({ state: "detached" });
    expect(await table.locator("tbody tr").count()).toBe(1);

    // A narrow screen: the table scrolls inside its card, the page does not overflow.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.getByLabel("Kind").selectOption("");
    await table.getByText("sign_in.succeeded").first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(page, "console-audit-narrow.png");
    expect(errors).toEqual([]);
    await context.close();
  });
});
