import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 31, team work: an admin hands a customer's conversation to a teammate from the console; the teammate holds it.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleForFile(canRun);

describe.runIf(canRun)("assigning a conversation to a teammate", () => {
  test(
    "an admin assigns it to an operator, who then holds it and replies",
    async () => {
      const b = await addMember(fx.s.url, await idToken(fx.s.url, fx.owner), "bea@shop.example");
      const t = await issueTokens(fx.s.url, fx.owner, "customer-7", { contact_name: "Grace Hopper" });
      const sent = await send(fx.s.url, t.access_token, "Can a person look at my order?");

      const admin = await newContext(fx.browser, { width: 1280, height: 800 });
      const page = await admin.newPage();
      await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
      await page.locator(".contact", { hasText: "Grace Hopper" }).click();
      await page.getByLabel("Assign to").selectOption(b.email);
      await page.getByRole("button", { name: "Assign", exact: true }).click();
      await page.getByText(`Held by bea (${b.email})`).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await admin.close();

      // The conversation is Bea's: her inbox lets her reply, and the customer's conversation says who holds it.
      const bea = await newContext(fx.browser, { width: 1280, height: 800 });
      const mine = await bea.newPage();
      await signIn(mine, fx.s.url, b.email, b.password);
      await mine.locator(".contact", { hasText: "Grace Hopper" }).click();
      await mine.getByLabel(/^Reply to/).fill("Bea here, looking at it now.");
      await mine.getByRole("button", { name: "Send" }).click();
      await mine.locator(".message--operator", { hasText: "Bea here" }).waitFor();
      // Operators cannot list the team, so they have no Assign control.
      expect(await mine.getByLabel("Assign to").count()).toBe(0);
      await bea.close();

      const state = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t.access_token });
      const c = state.body.data.conversations.find(
        (x: { conversation_id: string }) => x.conversation_id === sent.conversation_id,
      );
      expect(c).toMatchObject({ assigned_to: b.email, operator_name: "bea" });
    },
    scaled(90_000),
  );
});
