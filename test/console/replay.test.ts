import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { addSource, settled } from "../knowledge/support.js";
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

  test("a draft's knowledge source: a live one left out, one added to the draft; the replay cites each side's source", async () => {
    const token = await idToken(fx.s.url, fx.owner);
    const bot = await fx.s.app.accounts.createChatbot(fx.owner.email, "Sources bot", ["https://shop.example"], []);
    const live = await addSource(fx.s.url, token, bot.chatbotId, {
      kind: "snippets",
      title: "Old returns",
      snippets: [
        { title: "Returns", url: "https://shop.example/r", snippet: "Returns after delivery are free within 30 days." },
      ],
    });
    await settled(fx.s.url, token, bot.chatbotId, live.body.data.source_id);
    fx.s.clock.advance(1000);
    const customer = await issueTokens(fx.s.url, { ...fx.owner, chatbotId: bot.chatbotId }, "sources-page");
    await send(fx.s.url, customer.access_token, "Can I make returns after delivery?");

    const context = await newContext(fx.browser, { width: 1280, height: 900 });
    const page = await context.newPage();
    await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
    await page.goto(`${fx.s.url}/console/chatbots/${bot.chatbotId}/replay`);
    await page.getByText("No draft yet").waitFor();
    await page.getByRole("button", { name: "Save draft" }).click();
    await page.getByText("The draft is saved.").waitFor();
    // Leave the live source out, add the draft's own.
    await page.getByRole("checkbox", { name: "Old returns" }).click();
    await expect.poll(() => page.getByRole("checkbox", { name: "Old returns" }).isChecked()).toBe(false);
    await page.getByLabel("New draft source: title").fill("New returns");
    await page.getByLabel("New draft source: text").fill("Returns after delivery are free within 60 days.");
    await page.getByRole("button", { name: "Add to the draft" }).click();
    await page.locator("[data-testid=draft-source]").getByText("New returns").waitFor();
    await expect
      .poll(
        async () => {
          const d = await getJson(
            fx.s.url,
            `/v1/account/chatbots/${bot.chatbotId}/agent_draft`,
            {},
            {
              authorization: `Bearer ${token}`,
            },
          );
          return d.body.data.draft_sources.map((x: { status: string }) => x.status);
        },
        { timeout: scaled(30_000) },
      )
      .toEqual(["indexed"]);

    await page.getByLabel("Latest conversations").fill("1");
    await page.getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByRole("heading", { name: "1 of 1 answers change" }).waitFor({ timeout: scaled(30_000) });
    const changed = page.locator("[data-testid=replay-item][data-changed=true]");
    expect(await changed.locator("[data-side=live]").textContent()).toContain("source: Old returns");
    expect(await changed.locator("[data-side=draft]").textContent()).toContain("source: New returns");
    await context.close();
  });
});
