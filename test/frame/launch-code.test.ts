import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createEmbedSession, refreshAccessToken } from "../../src/client/embed.js";
import { postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, collectExposedState, freePort, launchBrowser, newContext, typeMessage } from "./browser.js";

// A client's page embeds the frame by launch code (the host script, a code from its server), in real Chromium: the
// address bar, the referrer of a link the frame opens, the service's log and the browser's history hold nothing that
// still works, and the launch address opened again in another tab is a readable page that says so.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

let browser: Browser;
let service: TestServer;
let account: TestAccount;
/** The frame's origin: the service under the name localhost, so it differs from the host page's 127.0.0.1. */
let appUrl: string;
let hostOrigin: string;
let host: Server;
/** What the host server was asked for, with the Referer each request carried. */
const hostRequests: { path: string; referer: string | undefined }[] = [];
/** Every launch code the host server issued, every access token and refresh token it saw. */
const issued: { launchCodes: string[]; accessTokens: string[]; refreshTokens: string[] } = {
  launchCodes: [],
  accessTokens: [],
  refreshTokens: [],
};

beforeAll(async () => {
  if (!canRun) return;
  const port = await freePort();
  hostOrigin = `http://127.0.0.1:${port}`;
  [browser, service] = await Promise.all([launchBrowser(), startServer()]);
  appUrl = service.url.replace("127.0.0.1", "localhost");
  // The frame cites an article on the host's own site, so the test sees what a link the frame opens carries.
  account = await service.account({
    origins: [hostOrigin],
    knowledge: [{ title: "Shipping", url: `${hostOrigin}/article`, snippet: "Orders ship within 2 business days." }],
  });
  const refreshTokens = new Map<string, string>();
  host = createServer(async (req, res) => {
    hostRequests.push({ path: req.url ?? "", referer: req.headers.referer });
    const userId = "launch-user";
    if (req.method === "GET" && req.url === "/") {
      const s = await createEmbedSession({
        baseUrl: service.url,
        appUrl,
        clientApiKey: account.apiKey,
        chatbotId: account.chatbotId,
        userId,
        launch: true,
      });
      issued.launchCodes.push(s.launchCode!);
      issued.accessTokens.push(s.accessToken);
      issued.refreshTokens.push(s.refreshToken);
      refreshTokens.set(userId, s.refreshToken);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Shop</title>
<div id="chat" style="width:380px;height:560px"></div>
<script src="${appUrl}/embed/v1.js"></script>
<script>
  AiAgent.mount(document.getElementById("chat"), {
    chatbotId: ${JSON.stringify(account.chatbotId)},
    launchCode: ${JSON.stringify(s.launchCode)},
    refresh: () => fetch("/refresh", { method: "POST" }).then((r) => r.json()),
  });
</script></html>`);
      return;
    }
    if (req.method === "POST" && req.url === "/refresh") {
      const fresh = await refreshAccessToken({
        baseUrl: service.url,
        chatbotId: account.chatbotId,
        userId,
        refreshToken: refreshTokens.get(userId)!,
      });
      issued.accessTokens.push(fresh.access_token);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ access_token: fresh.access_token }));
      return;
    }
    if (req.url === "/article") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>Shipping</title><p>Shipping</p>");
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => host.listen(port, "127.0.0.1", resolve));
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (host ? host.close(resolve) : resolve(undefined)));
  await service?.close(true);
});

describe.runIf(canRun)("the frame started by a launch code", () => {
  test("chats, and nothing in the address bar, a link's referrer, the log or the history still works; a replay in a second tab is a readable refusal", async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${hostOrigin}/`);
      const frame = await chatFrame(page);
      const code = issued.launchCodes.at(-1)!;
      // The iframe was made with the launch code, and the frame took it out of its address at once.
      const src = (await page.locator("iframe").getAttribute("src"))!;
      expect(new URL(src).searchParams.get("launch")).toBe(code);
      expect(src).not.toContain("access_token");
      expect(new URL(frame.url()).search).toBe("");
      expect(page.url()).toBe(`${hostOrigin}/`);

      await typeMessage(frame, "When do orders ship?");
      const reply = frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" });
      await reply.waitFor();

      // A link the frame opens carries no referrer at all.
      const [popup] = await Promise.all([
        context.waitForEvent("page"),
        reply.getByRole("link", { name: "Shipping" }).click(),
      ]);
      await popup.waitForLoadState();
      expect(await popup.evaluate(() => document.referrer)).toBe("");
      expect(hostRequests.filter((r) => r.path === "/article").map((r) => r.referer)).toEqual([undefined]);
      await popup.close();

      // The frame's own history entry was replaced: its address as the browser keeps it has no credential.
      expect(await frame.evaluate(() => location.href)).not.toMatch(/launch=|access_token=/);

      // The only credential-looking thing left in the browser is the used launch code in the iframe's src.
      const exposed = await collectExposedState(page, context);
      for (const t of [...issued.accessTokens, ...issued.refreshTokens, account.apiKey])
        expect(exposed).not.toContain(t);

      // Replaying the launch address in a second tab: a readable page, no chat, and a line in the service's log.
      const second = await context.newPage();
      const replay = await second.goto(src);
      expect(replay?.status()).toBe(403);
      await expect.poll(() => second.locator("h1").textContent()).toBe("This chat link has expired");
      expect(await second.locator("main").textContent()).toContain("already been used");
      expect(await second.locator("#chat").count()).toBe(0);
      // Nor can the code be exchanged by hand, even under the right origin.
      const byHand = await postJson(service.url, "/ai_agent/launch", {
        chatbot_id: account.chatbotId,
        launch_code: code,
        embed_origin: hostOrigin,
      });
      expect(byHand.status).toBe(401);

      // The service's log: the refusals, and no credential of this session (not even the used code).
      const log = service.logs.join("\n");
      expect(log).toContain('"launch code refused"');
      expect(log).toMatch(/"why":"used"/);
      for (const t of [code, ...issued.accessTokens, ...issued.refreshTokens, account.apiKey])
        expect(log).not.toContain(t);
    } finally {
      await context.close();
    }
  });

  test("a launch code for one origin does not open the chat in a page of another: the browser refuses the frame", async () => {
    // Another page, on another origin, that got hold of a fresh code for the shop's page.
    const code = (
      await createEmbedSession({
        baseUrl: service.url,
        appUrl,
        clientApiKey: account.apiKey,
        chatbotId: account.chatbotId,
        userId: "launch-user",
        launch: true,
      })
    ).launchCode!;
    const elsewhere = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        `<!doctype html><title>Elsewhere</title><iframe src="${appUrl}/chatbot-iframe/${account.chatbotId}?launch=${code}"></iframe>`,
      );
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      const logged: string[] = [];
      page.on("console", (m) => logged.push(m.text()));
      const { port } = elsewhere.address() as { port: number };
      await page.goto(`http://127.0.0.1:${port}/`);
      await expect
        .poll(() => logged.find((m) => m.includes("frame-ancestors")))
        .toMatch(new RegExp(`frame-ancestors ${hostOrigin.replaceAll(".", "\\.")}`));
      // The code was not used there: the shop's page can still start its chat with it.
      const ok = await postJson(service.url, "/ai_agent/launch", {
        chatbot_id: account.chatbotId,
        launch_code: code,
        embed_origin: hostOrigin,
      });
      expect(ok.status).toBe(200);
    } finally {
      await context.close();
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });
});
