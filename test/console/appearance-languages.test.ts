import { describe, expect, test } from "vitest";
import { chatFrame } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { idToken } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { openAppearancePage } from "./sign-in.js";

// Issue 46, item 3: the chatbot's default language and its own texts per language, edited on the console's
// appearance page; the customer's frame in that language shows them.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);

describe.runIf(canRun)("the chatbot's texts per language, in the console", () => {
  test("an admin sets the default language and French texts; a French visitor's frame shows them", {
    timeout: scaled(90_000),
  }, async () => {
    const { context: admin, page } = await openAppearancePage(fx.browser, fx.e);

    await page.getByLabel("Default language").selectOption("de");
    await page.getByLabel("Texts in").selectOption("fr");
    await page.getByLabel("Greeting in this language").fill("Bonjour ! Posez-nous vos questions.");
    await page.getByLabel("Rating prompt in this language").fill("Votre avis ?");
    // The preview shows the greeting of the language being edited.
    await page.locator(".preview__greeting[lang=fr]", { hasText: "Bonjour ! Posez-nous vos questions." }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole("button", { name: "Save appearance" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();

    const auth = { authorization: `Bearer ${await idToken(fx.e.service.url, fx.e.account)}` };
    const got = await requestJson(fx.e.service.url, "GET", `/v1/account/chatbots/${fx.e.account.chatbotId}`, auth);
    expect(got.body.data.appearance.default_locale).toBe("de");
    expect(got.body.data.appearance.texts).toEqual([
      {
        locale: "fr",
        greeting: "Bonjour ! Posez-nous vos questions.",
        away_message: "",
        rating_prompt: "Votre avis ?",
      },
    ]);
    // Read back on a new visit, the page shows what is stored.
    await page.reload();
    await page.getByLabel("Texts in").selectOption("fr");
    expect(await page.getByLabel("Rating prompt in this language").inputValue()).toBe("Votre avis ?");
    await admin.close();

    // A visitor whose browser speaks French gets the French frame with the French greeting.
    const visitor = await fx.browser.newContext({ locale: "fr-FR" });
    visitor.setDefaultTimeout(10_000);
    const shop = await visitor.newPage();
    await shop.goto(`${fx.e.host.url}/`);
    const frame = await chatFrame(shop);
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe("fr");
    expect(await frame.locator("#empty").textContent()).toBe("Bonjour ! Posez-nous vos questions.");
    await visitor.close();
  });
});
