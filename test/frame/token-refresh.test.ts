import type { BrowserContext, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { frameRoutes } from "../../src/frame/routes.js";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import {
  chatFrame,
  collectExposedState,
  freePort,
  newContext,
  type RecordedMessage,
  recordWindowMessages,
  typeMessage,
} from "./browser.js";
import { type Embedding, startEmbedding } from "./fixtures.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

// Time is the service's test clock, moved on purpose: a token life long enough that a slow machine never expires
// one by itself (expiry is exact, with no leeway; the asserted number of refreshes would change), and a refresh wait
// that a busy machine's round trip through the host's server cannot outlast; only the test that lets it lapse waits.
const TTL_S = 900;
/** Past the token's lifetime, without sleeping through it. */
const PAST_EXPIRY_MS = (TTL_S + 1) * 1000;
const REFRESH_TIMEOUT_MS = 8000;

/** Every token the client's server received from the service, captured on its server-to-server calls. */
const issued = { refresh: [] as string[], access: [] as string[] };
const realFetch = globalThis.fetch;

beforeAll(async () => {
  // Watch the example host server's own calls to the service (it runs in this process) to learn the secrets it holds.
  globalThis.fetch = async (input, init) => {
    const res = await realFetch(input, init);
    const url = String(input instanceof Request ? input.url : input);
    if (res.ok && (url.endsWith("/ai_agent/get_access_token") || url.endsWith("/ai_agent/refresh_token"))) {
      const body = (await res.clone().json()) as { data: { access_token: string; refresh_token?: string } };
      issued.access.push(body.data.access_token);
      if (body.data.refresh_token) issued.refresh.push(body.data.refresh_token);
    }
    return res;
  };
});
afterAll(() => {
  globalThis.fetch = realFetch;
});
const fx = embeddingForFile(canRun, {
  env: { AIAGENT_ACCESS_TOKEN_TTL: String(TTL_S) },
  overrides: { extraRoutes: (app) => frameRoutes(app, { refreshTimeoutMs: REFRESH_TIMEOUT_MS }) },
});

async function open(emb: Embedding = fx.e): Promise<{
  context: BrowserContext;
  page: Page;
  frame: Frame;
  messages: RecordedMessage[];
  requests: string[];
}> {
  const context = await newContext(fx.browser);
  const page = await context.newPage();
  const messages = await recordWindowMessages(page);
  const requests: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  await page.goto(`${emb.host.url}/`);
  return { context, page, frame: await chatFrame(page), messages, requests };
}

async function ask(frame: Frame, question: string, answer: string): Promise<void> {
  await typeMessage(frame, question);
  await frame.locator(".msg--assistant", { hasText: answer }).last().waitFor();
}

describe.runIf(canRun)("token refresh through the host page", () => {
  test("after the access token expires the frame asks the host page, which refreshes through its own server; the chat goes on by itself", async () => {
    const { context, page, frame, messages } = await open();
    await ask(frame, "How long does shipping take?", "Orders ship within 2 business days");
    const repliesBefore = await frame.locator(".msg--assistant").count();

    for (let round = 1; round <= 2; round++) {
      fx.e.service.clock.advance(PAST_EXPIRY_MS);
      await typeMessage(frame, `Can I return an item? (${round})`);
      await frame
        .locator(".msg--assistant")
        .nth(repliesBefore + round - 1)
        .filter({ hasText: "return any item within 30 days" })
        .waitFor();
    }
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    expect(await frame.locator(".msg--error").count()).toBe(0);

    const hostUrl = `${fx.e.host.url}/`;
    const asks = messages.filter((m) => m.data.includes("[TOKEN_REFRESH]"));
    const answers = messages.filter((m) => m.data.includes("[TOKEN_REFRESH_RESPONSE]"));
    // Each expiry asked (the live stream may ask on its own when its token expires: never more than once a round).
    expect(asks.length).toBeGreaterThanOrEqual(2);
    for (const m of asks) {
      expect(JSON.parse(m.data)).toEqual({ type: "[TOKEN_REFRESH]", reason: "TokenExpiredError" });
      expect(m.receiver).toBe(hostUrl);
      expect(m.origin).toBe(fx.e.frameOrigin);
    }
    expect(answers).toHaveLength(asks.length);
    for (const m of answers) {
      const data = JSON.parse(m.data) as Record<string, unknown>;
      expect(Object.keys(data).sort()).toEqual(["access_token", "type"]);
      expect(m.receiver.startsWith(`${fx.e.frameOrigin}/chatbot-iframe/`)).toBe(true);
      expect(m.origin).toBe(fx.e.hostOrigin);
    }
    // The conversation is one: the retried sends continued it.
    const texts = await frame.locator(".msg--user .msg__bubble").allTextContents();
    expect(texts).toEqual(["How long does shipping take?", "Can I return an item? (1)", "Can I return an item? (2)"]);
    await page.close();
    await context.close();
  });

  test("the refresh token and the API key appear in no window message, storage, cookie, frame URL or DOM", async () => {
    const { context, page, frame, messages } = await open();
    fx.e.service.clock.advance(PAST_EXPIRY_MS);
    await ask(frame, "Shipping?", "Orders ship within 2 business days");
    expect(messages.some((m) => m.data.includes("[TOKEN_REFRESH_RESPONSE]"))).toBe(true);

    const exposed = [JSON.stringify(messages), await collectExposedState(page, context)].join("\n");
    expect(issued.refresh.length).toBeGreaterThan(0);
    for (const secret of [...issued.refresh, fx.e.account.apiKey]) expect(exposed).not.toContain(secret);
    expect(exposed).not.toMatch(/\brt_[A-Za-z0-9_-]{10,}/);
    expect(exposed).not.toMatch(/\bcak_[A-Za-z0-9_-]{10,}/);
    // The frame keeps its access token in memory only: not in its URL, DOM or storage.
    const frameState = [frame.url(), await frame.content(), await frame.evaluate(() => location.href)].join("\n");
    for (const token of issued.access) expect(frameState).not.toContain(token);
    // Nor does the service's log keep any of them, though the frame page's own address carried the access token.
    const logs = fx.e.service.logs.join("\n");
    expect(logs).toContain("/chatbot-iframe/");
    for (const secret of [...issued.access, ...issued.refresh, fx.e.account.apiKey]) expect(logs).not.toContain(secret);
    await context.close();
  });

  test("a [TOKEN_REFRESH_RESPONSE] from a window that is not the parent, or from another origin, is ignored", async () => {
    const { context, page, frame, messages, requests } = await open();
    const forge = (token: string) => {
      const chat = window.parent.frames[0]!;
      chat.postMessage({ type: "[TOKEN_REFRESH_RESPONSE]", access_token: token }, "*");
    };
    // A sibling frame of the host page's own origin: the right origin, but not the parent.
    await page.evaluate(() => {
      const sibling = document.createElement("iframe");
      sibling.name = "sibling";
      sibling.srcdoc = "<p>sibling</p>";
      document.body.append(sibling);
      return new Promise((resolve) => sibling.addEventListener("load", resolve));
    });
    const sibling = page.frame({ name: "sibling" })!;
    expect(await sibling.evaluate(() => self.origin)).toBe(fx.e.hostOrigin);
    await sibling.evaluate(forge, "forged-by-sibling");
    // A frame of another origin (the service under its other name) posting to the chat frame.
    await page.evaluate((url) => {
      const stranger = document.createElement("iframe");
      stranger.name = "stranger";
      stranger.src = url;
      document.body.append(stranger);
      return new Promise((resolve) => stranger.addEventListener("load", resolve));
    }, `${fx.e.service.url}/healthz`);
    await page.frame({ name: "stranger" })!.evaluate(forge, "forged-by-stranger");

    await ask(frame, "Shipping?", "Orders ship within 2 business days");
    // Both forgeries reached the chat frame, which used neither.
    const received = messages.filter((m) => m.receiver.includes("/chatbot-iframe/") && m.data.includes("forged"));
    expect(received.map((m) => [m.origin, JSON.parse(m.data).access_token])).toEqual([
      [fx.e.hostOrigin, "forged-by-sibling"],
      [fx.e.service.url, "forged-by-stranger"],
    ]);
    expect(requests.filter((u) => u.includes("forged"))).toEqual([]);
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    await context.close();
  });

  test("the parent at an origin other than the frame's host origin is ignored too", async () => {
    // The chatbot allows two origins; the page says its origin is the other one, so the frame believes only that one.
    const other = await startEmbeddingWithClaimedOrigin();
    try {
      const context = await newContext(fx.browser);
      const page = await context.newPage();
      const messages = await recordWindowMessages(page);
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`${other.host.url}/`);
      const frame = await chatFrame(page);
      await page.evaluate(() =>
        (document.getElementById("aiagent-chat") as HTMLIFrameElement).contentWindow!.postMessage(
          { type: "[TOKEN_REFRESH_RESPONSE]", access_token: "forged-by-parent-at-wrong-origin" },
          "*",
        ),
      );
      await ask(frame, "Shipping?", "Orders ship within 2 business days");
      expect(
        messages
          .filter((m) => m.receiver.includes("/chatbot-iframe/") && m.data.includes("forged"))
          .map((m) => m.origin),
      ).toEqual([other.hostOrigin]);
      expect(requests.filter((u) => u.includes("forged"))).toEqual([]);
      await context.close();
    } finally {
      await other.close();
    }
  });

  test("when the host page gives no new token in time the frame says the session expired, keeps the text, and reconnects on request", async () => {
    const { context, page, frame } = await open();
    await ask(frame, "Hello", "I can answer questions about “Shipping” and “Returns”");
    // The host's server cannot be reached: the host page never answers the frame.
    await page.route(`${fx.e.host.url}/aiagent/refresh`, (r) => r.abort());
    fx.e.service.clock.advance(PAST_EXPIRY_MS);
    await typeMessage(frame, "Shipping please");
    const notice = frame.locator("#notice[data-kind=expired]");
    await notice.waitFor();
    expect(await notice.textContent()).toContain("Your session has expired");
    expect(await frame.getByRole("textbox").inputValue()).toBe("Shipping please");
    expect(await frame.getByRole("button", { name: "Send message" }).isDisabled()).toBe(true);

    await page.unroute(`${fx.e.host.url}/aiagent/refresh`);
    await frame.getByRole("button", { name: "Reconnect" }).click();
    await notice.waitFor({ state: "hidden" });
    await frame.getByRole("textbox").press("Enter");
    await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).waitFor();
    await context.close();
  });
});

describe.runIf(canRun)("a live stream outliving its token", () => {
  // The stream ends on a real timer in the server, set at the token's expiry: so this one suite uses a short real
  // lifetime, and waits for the refresh with a generous bound instead of a fixed sleep.
  const STREAM_TTL_S = 4;
  let short: Embedding;
  beforeAll(async () => {
    short = await startEmbedding({ env: { AIAGENT_ACCESS_TOKEN_TTL: String(STREAM_TTL_S) } });
  });
  afterAll(async () => {
    await short?.close();
  });

  test(
    "the live stream ends when its token expires; the frame gets a new token from the host page and resumes",
    async () => {
      const { context, frame, messages } = await open(short);
      await ask(frame, "How long does shipping take?", "Orders ship within 2 business days");
      const asked = () => messages.filter((m) => m.data.includes("[TOKEN_REFRESH]")).length;
      const before = asked();
      // Nothing is sent from the frame: only its live stream can run into the token's lifetime.
      await expect.poll(asked, { timeout: scaled(20_000), interval: 250 }).toBeGreaterThan(before);

      const token = await idToken(short.service.url, short.account);
      const auth = { authorization: `Bearer ${token}` };
      const contacts = await fetch(
        `${short.service.url}/get_contact_conversations?user_email_id=${encodeURIComponent(short.account.email)}`,
        { headers: auth },
      );
      const id = ((await contacts.json()) as any).data.data.contacts[0].latest_conversation_id as string;
      await postJson(short.service.url, "/take_over_conversation", { conversation_id: id, operator_name: "Sam" }, auth);
      await postJson(
        short.service.url,
        "/reply_to_conversation",
        { conversation_id: id, content: "Still here: Sam" },
        auth,
      );
      await frame.locator(".msg--operator", { hasText: "Still here: Sam" }).waitFor({ timeout: 2000 });
      expect(await frame.locator("#notice").isHidden()).toBe(true);
      await context.close();
    },
    scaled(60_000),
  );
});

async function startEmbeddingWithClaimedOrigin(): Promise<Embedding> {
  const claimed = `http://localhost:${await freePort()}`;
  return startEmbedding({ extraOrigins: [claimed], pageOrigin: claimed });
}
