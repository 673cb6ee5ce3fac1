import { mkdirSync } from "node:fs";
import type { Frame, Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { axeViolations } from "../console/axe.js";
import { hostPageForFile } from "../helpers/browser-fixtures.js";
import { contacts, idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { newContext, typeMessage } from "./browser.js";

// Issue 32, item 1: the host script's floating launcher on a page whose own CSS would wreck anything it reached, used
// with the keyboard only, with an unread badge for an operator's reply that comes while it is closed.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

/** A page that restyles everything it can reach: the launcher must look and work the same on it. */
const HOSTILE_CSS = `
  * { box-sizing: content-box !important; margin: 11px !important; padding: 7px !important;
      font: italic 31px/1 serif !important; border: 3px dashed #333 !important; }
  button, iframe, [role=dialog] { display: none !important; }
  div, span, svg { position: static !important; transform: rotate(4deg) !important; }
  body > * { width: 10px !important; height: 10px !important; z-index: 0 !important; }
`;

// The frame's origin is the service under the name localhost, so it differs from the host page's.
const fx = hostPageForFile(
  canRun,
  "launcher-visitor",
  ({ frameUrl, appUrl }) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A shop with loud styles</title>
<style>${HOSTILE_CSS}</style></head>
<body><main><h1>Welcome</h1><p><a href="#offers">Offers</a></p></main>
<script src="${appUrl}/embed/v1.js"></script>
<script>window.chat = AiAgent.launcher({ frameUrl: ${JSON.stringify(frameUrl)}, refresh: async () => null,
  label: "Chat with the shop", title: "Chat with the shop's assistant" });</script>
</body></html>`,
);

const launcherButton = (page: Page) => page.locator("aiagent-launcher button");
/** The element that has the keyboard focus, looking into the launcher's shadow root. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    return a?.shadowRoot?.activeElement?.tagName ?? a?.tagName ?? "";
  });
const chat = async (page: Page): Promise<Frame> => {
  const handle = await page.locator("aiagent-launcher iframe").elementHandle();
  const frame = await handle!.contentFrame();
  await frame!.locator("#input").waitFor();
  return frame!;
};

describe.runIf(canRun)("the floating launcher", () => {
  test("opens and closes with the keyboard on a hostile page, keeps the conversation, and badges an operator's reply", async () => {
    const context = await newContext(fx.browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await page.goto(`${fx.hostUrl}/`);
    const button = launcherButton(page);
    await button.waitFor();

    // The page's styles did not reach it: a 56 px round button in the bottom-right corner, the panel closed.
    const box = (await button.boundingBox())!;
    expect(box.width).toBe(56);
    expect(box.height).toBe(56);
    expect(box.x + box.width).toBe(1280 - 20);
    expect(box.y + box.height).toBe(800 - 20);
    expect(await button.getAttribute("aria-expanded")).toBe("false");
    expect(await page.locator("aiagent-launcher [role=dialog]").isHidden()).toBe(true);
    expect(await button.evaluate((b) => b.textContent)).toBe("Chat with the shop");
    expect(await axeViolations(page, "all")).toEqual([]);
    if (process.env.UPDATE_DOCS === "1") await screenshot(page, "launcher-closed.png");

    // Keyboard only: Tab past the page's link to the button, Enter opens, the caret is in the chat's message box.
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("BUTTON");
    await page.keyboard.press("Enter");
    expect(await button.getAttribute("aria-expanded")).toBe("true");
    const frame = await chat(page);
    const panel = (await page.locator("aiagent-launcher iframe").boundingBox())!;
    expect(panel.width).toBe(380);
    expect(panel.height).toBeGreaterThan(500);
    await frame.waitForFunction(() => document.activeElement?.id === "input");
    await typeMessage(frame, "How long does shipping take?");
    await frame.locator(".msg--assistant[data-message-id]").first().waitFor();
    expect(await axeViolations(page, "all")).toEqual([]);
    if (process.env.UPDATE_DOCS === "1") await screenshot(page, "launcher-open.png");

    // Escape in the chat closes it and gives the focus back to the button.
    await page.keyboard.press("Escape");
    await page.locator("aiagent-launcher [role=dialog]").waitFor({ state: "hidden" });
    expect(await focused(page)).toBe("BUTTON");
    expect(await button.getAttribute("aria-expanded")).toBe("false");

    // An operator answers while it is closed: the button shows one unread message, and says so to screen readers.
    const token = await idToken(fx.service.url, fx.account);
    const auth = { authorization: `Bearer ${token}` };
    const conversationId = (await contacts(fx.service.url, token, fx.account.email)).body.data.data.contacts[0]
      .latest_conversation_id as string;
    const take = { conversation_id: conversationId, operator_name: "Sam" };
    expect((await postJson(fx.service.url, "/take_over_conversation", take, auth)).status).toBe(200);
    const reply = { conversation_id: conversationId, content: "Hi, Sam here: your parcel left today." };
    expect((await postJson(fx.service.url, "/reply_to_conversation", reply, auth)).status).toBe(200);
    const badge = page.locator("aiagent-launcher .badge");
    await badge.waitFor({ state: "visible" });
    expect(await badge.textContent()).toBe("1");
    expect(await button.evaluate((b) => b.textContent)).toContain("Chat with the shop (1 new message)");
    expect(await axeViolations(page, "all")).toEqual([]);
    if (process.env.UPDATE_DOCS === "1") await screenshot(page, "launcher-badge.png");

    // Opened again (a click this time): the badge is gone, and the conversation is all there, the reply included.
    await button.click();
    await badge.waitFor({ state: "hidden" });
    await frame.locator(".msg--operator", { hasText: "your parcel left today" }).waitFor();
    expect(await frame.locator(".msg--user", { hasText: "How long does shipping take?" }).count()).toBe(1);
    // Escape on the button closes it too.
    await button.focus();
    await page.keyboard.press("Escape");
    await page.locator("aiagent-launcher [role=dialog]").waitFor({ state: "hidden" });
    await context.close();
  });
});

async function screenshot(page: Page, name: string): Promise<void> {
  const docs = new URL("../../docs/", import.meta.url);
  mkdirSync(docs, { recursive: true });
  await page.screenshot({ path: new URL(name, docs).pathname, animations: "disabled" });
}
