import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { issueTokens, send } from "../helpers/flows.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { signIn } from "./sign-in.js";

// The replay page: a draft with one knowledge entry changed, replayed against the latest conversations, shows side by
// side exactly the answer that changes; published, customers get it.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const fx = consoleForFile(canRun);

const KNOWLEDGE = [
  { title: "Shipping", url: "https://shop.example/shipping", snippet: "Orders ship within 2 business days." },
  { title: "Returns", url: "https://shop.example/returns", snippet: "Returns are free within 30 days of delivery." },
];

describe.runIf(canRun)("draft and replay in the console", () => {
  test("the changed answer shows live and draft side by side; published, customers get the draft", async () => {
    await fx.s.app.accounts.updateChatbot(fx.owner.email, fx.owner.chatbotId, { knowledge: KNOWLEDGE });
    for (const [i, q] of ["How long does shipping take for orders?", "Can I make returns after delivery?"].entries()) {
      fx.s.clock.advance(1000);
      await send(fx.s.url, (await issueTokens(fx.s.url, fx.owner, `replay-page-${i}`)).access_token, q);
    }
    const context = await newContext(fx.browser, { width: 1280, height: 900 });
    const page = await context.newPage();
    await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
    await page.goto(`${fx.s.url}/console/chatbots/${fx.owner.chatbotId}/replay`);
    const list = page.getByLabel("Draft knowledge list");
    await page.getByText("No draft yet").waitFor();
    // The draft starts as the live list, filled in once the page has read it.
    await expect.poll(() => list.inputValue(), { timeout: scaled(15_000) }).toContain("30 days");
    await list.fill((await list.inputValue()).replace("30 days", "60 days"));
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText("The draft is saved.").waitFor();

    await page.getByLabel("Latest conversations").fill("2");
    await page.getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByRole("heading", { name: "1 of 2 answers change" }).waitFor({ timeout: scaled(30_000) });
    const changed = page.locator("[data-testid=replay-item][data-changed=true]");
    expect(await changed.count()).toBe(1);
    expect(await changed.locator("[data-side=live]").textContent()).toContain("30 days");
    expect(await changed.locator("[data-side=draft]").textContent()).toContain("60 days");
    expect(await changed.textContent()).toContain("changed: content, documents");

    await page.getByRole("button", { name: "Publish draft" }).click();
    await page.getByText("The draft is live.").waitFor();
    const after = await send(
      fx.s.url,
      (await issueTokens(fx.s.url, fx.owner, "replay-page-after")).access_token,
      "Can I make returns after delivery?",
    );
    expect(after.reply.content).toContain("60 days");
    await context.close();
  });
});
