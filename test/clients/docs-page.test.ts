import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../frame/browser.js";
import { removeAtExit } from "../helpers/leftovers.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

// UPDATE_DOCS=1 (as for every docs screenshot; AIAGENT_UPDATE_SCREENSHOTS=1, its older name, too) rewrites the
// committed docs/docs.png; otherwise the screenshot goes to a temp dir.
const SHOT_DIR =
  process.env.UPDATE_DOCS === "1" || process.env.AIAGENT_UPDATE_SCREENSHOTS === "1"
    ? undefined
    : mkdtempSync(join(tmpdir(), "aiagent-docs-"));
// Removed at the file's end below, and at exit if the run is stopped before it (a killed run left it behind).
if (SHOT_DIR) removeAtExit(SHOT_DIR);
const SCREENSHOT = SHOT_DIR ? join(SHOT_DIR, "docs.png") : "docs/docs.png";
const doc = JSON.parse(readFileSync("gen/openapi/aiagent.v1.openapi.json", "utf8"));
const operationCount = Object.values(doc.paths).reduce((n: number, ops) => n + Object.keys(ops as object).length, 0);

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  s = await startServer();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.close(true);
  if (SHOT_DIR) rmSync(SHOT_DIR, { recursive: true, force: true });
});

describe.runIf(canRun)("GET /docs in headless Chromium", () => {
  it("renders every documented route from /openapi.json, loading nothing from another origin", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on("request", (r) => void requested.push(r.url()));
    page.on("pageerror", (e) => void problems.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });

    const r = await page.goto(`${s.url}/docs`);
    expect(r?.status()).toBe(200);
    await page.waitForSelector(".opblock");
    await expect.poll(() => page.locator(".opblock").count()).toBe(operationCount);
    expect(await page.locator(".info .title").textContent()).toContain(doc.info.title);
    for (const path of [
      "/ai_agent/get_access_token",
      "/ai_agent/refresh_token",
      "/get_contact_conversations",
      "/get_messages_for_conversation",
    ]) {
      await expect
        .poll(() => page.locator(`.opblock-summary-path[data-path="${path}"]`).count(), { message: path })
        .toBe(1);
    }

    // Open the contact list: its parameters show the documented default and bounds.
    await page.locator('.opblock-summary-path[data-path="/get_contact_conversations"]').click();
    const params = page.locator(".opblock.is-open .parameters");
    await params.waitFor();
    const text = (await params.textContent()) ?? "";
    expect(text).toContain("user_email_id");
    expect(text).toMatch(/Default value\s*:\s*10/);
    expect(text).toContain("filter");

    const origin = new URL(s.url).origin;
    expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith("data:"))).toEqual([]);
    expect(requested).toContain(`${origin}/openapi.json`);
    expect(problems).toEqual([]);

    await page.screenshot({ path: SCREENSHOT });
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe("PNG");
    await context.close();
  });

  it("keeps authorisation out of browser storage", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.url}/docs`);
    await page.waitForSelector(".opblock");
    await page.locator("button.authorize").click();
    const input = page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first();
    await input.fill("secret-token-value");
    await page.locator(".modal-ux button.authorize").first().click();
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
    );
    expect(stored).not.toContain("secret-token-value");
    await context.close();
  });
});
