import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { launchBrowser, newContext } from "../frame/browser.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import type { TestAccount, TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { signIn, startConsoleServer } from "./sign-in.js";

// Issue 31, team work: an admin hands a customer's conversation to a teammate from the console; the teammate holds it.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

let browser: Browser;
let s: TestServer;
let owner: TestAccount;

beforeAll(async () => {
  if (!canRun) return;
  [browser, s] = await Promise.all([launchBrowser(), startConsoleServer()]);
  owner = await s.account();
});
afterAll(async () => {
  await browser?.close();
  await s?.close(true);
});

describe.runIf(canRun)("assigning a conversation to a teammate", () => {
  test(
    "an admin assigns it to an operator, who then holds it and replies",
    async () => {
      const b = await addMember(s.url, await idToken(s.url, owner), "bea@shop.example");
      const t = await issueTokens(s.url, owner, "customer-7", { contact_name: "Grace Hopper" });
      const sent = await send(s.url, t.access_token, "Can a person look at my order?");

      const admin = await newContext(browser, { width: 1280, height: 800 });
      const page = await admin.newPage();
      await signIn(page, s.url, owner.email, owner.password);
      await page.locator(".contact", { hasText: "Grace Hopper" }).click();
      await page.getByLabel("Assign to").selectOption(b.email);
      await page.getByRole("button", { name: "Assign", exact: true }).click();
      await page.getByText(`Held by bea (${b.email})`).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await admin.close();

      // The conversation is Bea's: her inbox lets her reply, and the customer's conversation says who holds it.
      const bea = await newContext(browser, { width: 1280, height: 800 });
      const mine = await bea.newPage();
      await signIn(mine, s.url, b.email, b.password);
      await mine.locator(".contact", { hasText: "Grace Hopper" }).click();
      await mine.getByLabel(/^Reply to/).fill("Bea here, looking at it now.");
      await mine.getByRole("button", { name: "Send" }).click();
      await mine.locator(".message--operator", { hasText: "Bea here" }).waitFor();
      // Operators cannot list the team, so they have no Assign control.
      expect(await mine.getByLabel("Assign to").count()).toBe(0);
      await bea.close();

      const state = await getJson(s.url, "/ai_agent/conversations", { access_token: t.access_token });
      const c = state.body.data.conversations.find(
        (x: { conversation_id: string }) => x.conversation_id === sent.conversation_id,
      );
      expect(c).toMatchObject({ assigned_to: b.email, operator_name: "bea" });
    },
    scaled(90_000),
  );
});
