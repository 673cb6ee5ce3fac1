import type { Page } from "playwright-core";
import { describe, expect, onTestFinished, test } from "vitest";
import { frameRoutes } from "../../src/frame/routes.js";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, newContext, type RecordedMessage, recordWindowMessages, typeMessage } from "./browser.js";

// A 20-second access token, as in production but short. Time is moved, not waited for: the browser's clock is paused
// (Playwright's fake clock) and the service's test clock frozen, and both are run forward together on purpose,
// so a token the frame did not replace in time really expires at the service.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const TTL_MS = 20_000;
/** Short enough that the early question's wait runs out while the token still works (85% + 2 s < 100%). */
const REFRESH_TIMEOUT_MS = 2000;

const fx = embeddingForFile(canRun, {
  env: { AIAGENT_ACCESS_TOKEN_TTL: String(TTL_MS / 1000) },
  overrides: { extraRoutes: (app) => frameRoutes(app, { refreshTimeoutMs: REFRESH_TIMEOUT_MS }) },
});

/** Moves the browser's and the service's clocks forward together. */
async function elapse(page: Page, ms: number): Promise<void> {
  fx.e.service.clock.advance(ms);
  await page.clock.runFor(ms);
}

async function open() {
  // Both clocks stand still but for elapse(): a slow machine's real seconds would otherwise age tokens at the service.
  fx.e.service.clock.freezeAt(Date.now());
  onTestFinished(() => fx.e.service.clock.resume());
  const context = await newContext(fx.browser);
  const page = await context.newPage();
  await page.clock.install();
  await page.clock.pauseAt(Date.now() + 1000);
  const messages = await recordWindowMessages(page);
  const failed: string[] = [];
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url().split("?")[0]}`);
  });
  await page.goto(`${fx.e.host.url}/`);
  const frame = await chatFrame(page);
  return { context, page, frame, messages, failed, requests };
}

const asks = (messages: RecordedMessage[]) =>
  messages
    .filter((m) => m.data.includes('"[TOKEN_REFRESH]"'))
    .map((m) => JSON.parse(m.data) as Record<string, unknown>);
const answers = (messages: RecordedMessage[]) => messages.filter((m) => m.data.includes("[TOKEN_REFRESH_RESPONSE]"));

describe.runIf(canRun)("refresh ahead of expiry, with the documented host page (examples/host-page, unchanged)", () => {
  test("the frame asks between 70% and 85% of the token's lifetime and the chat goes on past the first token's expiry with no failed call", async () => {
    const { context, page, frame, messages, failed, requests } = await open();
    await typeMessage(frame, "How long does shipping take?");
    await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).last().waitFor();

    // A message type the frame does not know is ignored, even with a token in it.
    await page.evaluate(() =>
      (document.getElementById("aiagent-chat") as HTMLIFrameElement).contentWindow!.postMessage(
        { type: "[TOKEN_PUSH]", access_token: "unknown-type-token" },
        "*",
      ),
    );
    // Just before 70%: nothing asked yet.
    await elapse(page, TTL_MS * 0.7 - 100);
    expect(asks(messages)).toEqual([]);
    // By 85% the frame has asked once, early, and the documented host page (which answers any [TOKEN_REFRESH]) answered.
    await elapse(page, TTL_MS * 0.15 + 100);
    await expect.poll(() => answers(messages).length).toBe(1);
    const [early] = asks(messages);
    expect(early).toEqual({ type: "[TOKEN_REFRESH]", reason: "TokenExpiringSoon", request_id: expect.any(String) });
    expect(early!.request_id).toMatch(/^[0-9a-f]{32}$/);
    expect(answers(messages)[0]!.origin).toBe(fx.e.hostOrigin);

    // Past the first token's expiry: the frame already holds a new one, so nothing fails and nothing is asked again.
    await elapse(page, TTL_MS * 0.2);
    await typeMessage(frame, "Can I return an item?");
    await frame.locator(".msg--assistant", { hasText: "return any item within 30 days" }).last().waitFor();
    expect(failed).toEqual([]);
    expect(asks(messages)).toHaveLength(1);
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    expect(messages.some((m) => m.data.includes("unknown-type-token"))).toBe(true);
    expect(requests.filter((u) => u.includes("unknown-type-token"))).toEqual([]);
    await context.close();
  });

  test("when the host page does not answer the early question, the documented reactive refresh still saves the chat", async () => {
    const { context, page, frame, messages } = await open();
    await typeMessage(frame, "Hello");
    await frame
      .locator(".msg--assistant", { hasText: "I can answer questions about “Shipping” and “Returns”" })
      .waitFor();
    // The host's server cannot be reached while the frame asks early.
    await page.route(`${fx.e.host.url}/aiagent/refresh`, (r) => r.abort());
    await elapse(page, TTL_MS * 0.85 + 100);
    await expect.poll(() => asks(messages).length).toBe(1);
    expect(asks(messages)[0]!.reason).toBe("TokenExpiringSoon");
    // The early question's wait runs out; the token still works, so the frame says nothing to the customer.
    await elapse(page, REFRESH_TIMEOUT_MS);
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    expect(answers(messages)).toEqual([]);

    // The host's server is back; the token has expired by now: the next call fails and the frame asks as documented.
    await page.unroute(`${fx.e.host.url}/aiagent/refresh`);
    await elapse(page, TTL_MS * 0.1);
    await typeMessage(frame, "How long does shipping take?");
    await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).last().waitFor();
    const reactive = asks(messages).slice(1);
    expect(reactive.length).toBeGreaterThanOrEqual(1);
    for (const m of reactive) expect(m).toEqual({ type: "[TOKEN_REFRESH]", reason: "TokenExpiredError" });
    // Which call meets the expired token first varies: the send (a 401), or the live stream, which the gate now
    // re-checks within a second and ends with the same reason. Either way the frame asked as documented (above).
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    await context.close();
  });
});
