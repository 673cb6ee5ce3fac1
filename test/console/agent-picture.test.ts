import type { Locator } from "playwright-core";
import { describe, expect, test } from "vitest";
import { chatFrame } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { discPng } from "../helpers/png.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { axeViolations } from "./axe.js";
import { customerWrites, openAppearancePage } from "./sign-in.js";

// Issue 32: an admin uploads the chatbot's agent picture on its appearance page and sees it in the preview; the
// customer's frame shows it in its header and beside the agent's answers, named by the agent's name. Removed, it is
// gone from both. A file that is not an image is refused with a message naming it.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);

/** The image was fetched and decoded (a broken one has no natural width). */
const loaded = (img: Locator) => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0);

describe.runIf(canRun)("the agent's picture", () => {
  test("uploaded in the console, it is in the preview and in the customer's frame; removed, it is gone", async () => {
    const { context: admin, page } = await openAppearancePage(fx.browser, fx.e);
    await page.getByLabel("Agent name").fill("Ava");
    await page.getByRole("button", { name: "Save appearance" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();

    // Not an image: refused, naming it; nothing shown.
    const file = page.locator("#agent-picture-file");
    await file.setInputFiles({ name: "ava.svg", mimeType: "image/svg+xml", buffer: Buffer.from("<svg></svg>") });
    await page.getByRole("alert").filter({ hasText: "must be a PNG, JPEG or WebP image" }).waitFor();
    expect(await page.getByTestId("agent-picture").count()).toBe(0);

    await file.setInputFiles({ name: "ava.png", mimeType: "image/png", buffer: discPng(96, [120, 60, 200]) });
    const picture = page.getByRole("img", { name: "Ava", exact: true }).and(page.getByTestId("agent-picture"));
    await picture.waitFor();
    expect(await loaded(picture)).toBe(true);
    expect(await page.getByRole("alert").count()).toBe(0);
    const inPreview = page.getByTestId("preview-agent-picture");
    await inPreview.waitFor();
    expect(await loaded(inPreview)).toBe(true);
    expect(await inPreview.getAttribute("alt")).toBe("Ava");
    expect(await axeViolations(page)).toEqual([]);
    if (process.env.UPDATE_DOCS === "1")
      await page.screenshot({
        path: new URL("../../docs/console-appearance-picture.png", import.meta.url).pathname,
        fullPage: true,
      });

    // The customer's frame: the picture in the header and beside the agent's answer, its alt text the agent's name.
    const customer = await customerWrites(fx.browser, fx.e.host.url, "Where is my order?");
    const header = customer.frame.locator("#avatar img");
    expect(await header.getAttribute("alt")).toBe("Ava");
    expect(await loaded(header)).toBe(true);
    const beside = customer.frame.locator(".msg--assistant .msg__who img").first();
    await beside.waitFor();
    expect(await beside.getAttribute("alt")).toBe("Ava");
    expect(await loaded(beside)).toBe(true);
    expect(await customer.frame.locator(".msg--user .msg__who").count()).toBe(0);
    expect(await axeViolations(customer.frame)).toEqual([]);
    if (process.env.UPDATE_DOCS === "1")
      await customer.page.screenshot({
        path: new URL("../../docs/frame-agent-picture.png", import.meta.url).pathname,
      });

    // Removed in the console: gone from the preview, and from the frame at its next load.
    await page.getByRole("button", { name: "Remove picture" }).click();
    await page.getByRole("button", { name: "Remove picture" }).waitFor({ state: "detached" });
    await inPreview.waitFor({ state: "detached" });
    expect(await page.getByTestId("agent-picture").count()).toBe(0);
    await customer.page.reload();
    const again = await chatFrame(customer.page);
    expect(await again.locator("#avatar img").count()).toBe(0);
    expect(await again.locator("#avatar").textContent()).toBe("A");
    await customer.context.close();
    await admin.close();
  });
});
