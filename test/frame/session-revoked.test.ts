import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { App } from "../../src/app.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { idToken } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { chatFrame, launchBrowser, newContext, recordWindowMessages, typeMessage } from "./browser.js";
import { type Embedding, startEmbedding } from "./fixtures.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

// Issue 27: a customer's session revoked by the account (POST /v1/account/sessions/{id}/revoke) ends the frame's
// open stream within a second with the typed error, and the frame asks its host page for a new token exactly as it
// does for an expired one. The host's refresh token is of the revoked session too, so no new token comes, and the
// chat says so.

const REFRESH_TIMEOUT_MS = 3000;
let browser: Browser;
let e: Embedding;

beforeAll(async () => {
  // The host page answers the frame nothing (its refresh fails): the frame's wait for it is shortened.
  const overrides = { extraRoutes: (app: App) => frameRoutes(app, { refreshTimeoutMs: REFRESH_TIMEOUT_MS }) };
  [browser, e] = await Promise.all([launchBrowser(), startEmbedding({ overrides })]);
});
afterAll(async () => {
  await browser?.close();
  await e?.close();
});

/** A watch stream's line as the chat frame received it, and when (this process's clock). */
interface StreamLine {
  at: number;
  line: string;
}

describe.runIf(canRun)("the frame after its customer session is revoked", () => {
  test("the open stream ends with TokenRevokedError within 1 s; the frame asks its host page for a new token", async () => {
    const context = await newContext(browser);
    const page = await context.newPage();
    const messages = await recordWindowMessages(page);
    const lines: StreamLine[] = [];
    await page.exposeBinding("__streamLine", (_src, line: string) => void lines.push({ at: Date.now(), line }));
    // In every frame: a copy of each watch stream's lines goes to the test, the frame reads the other copy unchanged.
    await page.addInitScript(() => {
      const report = (window as unknown as { __streamLine(l: string): void }).__streamLine;
      const fetch = window.fetch.bind(window);
      window.fetch = async (input, init) => {
        const res = await fetch(input, init);
        if (!String(input instanceof Request ? input.url : input).includes("/watch_conversation") || !res.body)
          return res;
        const [mine, theirs] = res.body.tee();
        void (async () => {
          const text = mine.pipeThrough(new TextDecoderStream()).getReader();
          let rest = "";
          for (;;) {
            const { value, done } = await text.read().catch(() => ({ value: undefined, done: true }));
            if (done) break;
            const parts = (rest + value).split("\n");
            rest = parts.pop() ?? "";
            for (const p of parts) if (p.trim()) report(p);
          }
        })();
        return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
      };
    });
    await page.goto(`${e.host.url}/`);
    const frame = await chatFrame(page);
    await typeMessage(frame, "How long does shipping take?");
    await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).waitFor();
    // The live stream is open: it has delivered the conversation.
    await expect.poll(() => lines.length, { timeout: scaled(10_000) }).toBeGreaterThan(0);

    const admin = { authorization: `Bearer ${await idToken(e.service.url, e.account)}` };
    // The one visitor of this embedding's chatbot: the page's customer.
    const sessions = await getJson(e.service.url, "/v1/account/sessions", { chatbot_id: e.account.chatbotId }, admin);
    expect(sessions.body.data.sessions).toHaveLength(1);
    const sessionId = sessions.body.data.sessions[0].session_id as string;
    const asksBefore = messages.filter((m) => m.data.includes("[TOKEN_REFRESH]")).length;
    const revoked = await postJson(e.service.url, `/v1/account/sessions/${sessionId}/revoke`, {}, admin);
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();

    const ended = () => lines.find((l) => l.line.includes('"error"'));
    await expect.poll(ended, { timeout: scaled(5000), interval: 20 }).toBeDefined();
    const end = ended()!;
    const error = JSON.parse(end.line).error;
    expect(error.code).toBe("unauthenticated");
    expect(JSON.stringify(error.details)).toContain("TokenRevokedError");
    // The product's promise: a revoked credential's stream ends within a second.
    expect(end.at - revokedAt).toBeLessThanOrEqual(1000);

    // The frame asks its parent, the host page, for a new token, with the documented reason.
    const asks = () => messages.filter((m) => m.data.includes("[TOKEN_REFRESH]")).slice(asksBefore);
    await expect.poll(() => asks().length, { timeout: scaled(5000) }).toBeGreaterThan(0);
    expect(JSON.parse(asks()[0]!.data)).toEqual({ type: "[TOKEN_REFRESH]", reason: "TokenExpiredError" });
    expect(asks()[0]!.receiver).toBe(`${e.host.url}/`);
    expect(asks()[0]!.origin).toBe(e.frameOrigin);
    // The host's refresh token was the revoked session's: it has none to give, and the chat says the session ended.
    const notice = frame.locator("#notice[data-kind=expired]");
    await notice.waitFor({ timeout: scaled(15_000) });
    expect(await notice.textContent()).toContain("Your session has expired");
    await context.close();
  });
});
