import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { aiagent } from "../helpers/cli.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 31, items 4, 5 and 6: whole invitation links, Profile and Team on a phone, and an invited person signed in
// by accepting.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const PHONE = { width: 375, height: 740 };

/** How far the page reaches past the viewport's right edge, in CSS pixels (0: nothing is off-screen). */
const overflow = (page: Page) =>
  page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth));

describe.runIf(canRun)("the console's team pages", () => {
  const fx = consoleForFile();

  test("an invitation link is a whole address; opened elsewhere it sets the password and signs the new member in", async () => {
    const admin = await newContext(fx.browser, { width: 1280, height: 800 });
    const page = await admin.newPage();
    await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
    await page.getByRole("link", { name: "Team" }).click();
    const email = `kim-${Date.now()}@example.com`;
    await page.getByLabel("E-mail").fill(email);
    await page.getByRole("button", { name: /^Invite/ }).click();
    const link = (await page.getByTestId("invitation-url").textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${fx.s.url}/console/invitation#code=`));
    await admin.close();

    // The new member, in another browser, with nothing but the link.
    const member = await newContext(fx.browser, { width: 1280, height: 800 });
    const mine = await member.newPage();
    await mine.goto(link);
    await mine.getByRole("heading", { name: "Join the team" }).waitFor();
    await mine.getByLabel("New password").fill("a fine new password");
    await mine.getByLabel("The same password again").fill("a fine new password");
    await mine.getByRole("button", { name: "Accept the invitation" }).click();
    // Signed in at once: no third typing of the password.
    await mine.getByRole("heading", { name: "Inbox" }).waitFor();
    expect(await mine.locator(".who").textContent()).toContain(email);
    expect(await mine.getByRole("heading", { name: "Sign in to the console" }).count()).toBe(0);
    await member.close();
  });

  test("an account made without a password gets one from `aiagent account password` and signs in to the console", async () => {
    const email = `walkthrough-${Date.now()}@example.com`;
    const db = { AIAGENT_DB: fx.s.dbPath };
    expect((await aiagent(["account", "create", "--email", email], db)).code).toBe(0);
    const context = await newContext(fx.browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await page.goto(`${fx.s.url}/console/`);
    await page.getByLabel("E-mail").fill(email);
    await page.getByLabel("Password").fill("correct horse battery staple");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();

    const set = await aiagent(
      ["account", "password", "--email", email, "--password", "correct horse battery staple"],
      db,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain(`password of ${email} set`);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Inbox" }).waitFor();
    await context.close();
  });

  test("Profile and Team fit a 375 px phone: nothing off-screen, every action in reach, no serious axe finding", async () => {
    // Enough rows for the tables to be full: keys, members, sessions.
    const admin = await idToken(fx.s.url, fx.owner);
    for (const who of ["a-rather-long-address-for-a-member@example.com", "sam@example.com"])
      await postJson(
        fx.s.url,
        "/v1/account/members",
        { email: who, role: "operator" },
        { authorization: `Bearer ${admin}` },
      );
    await issueTokens(fx.s.url, fx.owner, "customer-with-a-long-identifier-0001");
    const context = await newContext(fx.browser, PHONE);
    const page = await context.newPage();
    await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
    for (const [path, heading] of [
      ["/console/profile", "Profile"],
      ["/console/team", "Team"],
    ] as const) {
      await page.goto(`${fx.s.url}${path}`);
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await page.locator("table").first().waitFor();
      expect(await overflow(page), `${path} is wider than the phone`).toBe(0);
      for (const b of await page.getByRole("button").all()) {
        if (!(await b.isVisible())) continue;
        const box = (await b.boundingBox())!;
        expect(box.x + box.width, `${path}: ${await b.textContent()}`).toBeLessThanOrEqual(PHONE.width);
      }
      expect(await axeViolations(page), path).toEqual([]);
    }
    await context.close();
  });
});
