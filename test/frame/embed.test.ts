import { mkdirSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { bootstrapDemo } from "../../src/bootstrap.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { startServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, newContext, openCustomerFrame, typeMessage } from "./browser.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = embeddingForFile(canRun);

describe.runIf(canRun)("the chat frame embedded in a client's page", () => {
  test("a person chats in the frame served from another origin, sees the reply with its source, and finds the history after a reload", async () => {
    const opened = await openCustomerFrame(fx.browser, fx.e.host.url);
    const { context, page } = opened;
    let { frame } = opened;
    expect(new URL(frame.url()).origin).toBe(fx.e.frameOrigin);
    expect(new URL(page.url()).origin).toBe(fx.e.hostOrigin);
    // The token was taken out of the frame's address as soon as the page started.
    expect(frame.url()).not.toContain("access_token");
    expect(frame.url()).not.toContain("user_id");

    await typeMessage(frame, "Hello");
    await frame
      .locator(".msg--assistant .msg__bubble", { hasText: "I can answer questions about “Shipping” and “Returns”" })
      .waitFor();
    await typeMessage(frame, "How long does shipping take?");
    const reply = frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" });
    await reply.waitFor();
    const source = reply.getByRole("link", { name: "Shipping" });
    expect(await source.getAttribute("href")).toBe("https://shop.example/help/shipping");
    expect(await source.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await frame.getByRole("textbox").inputValue()).toBe("");

    // The screenshot in the README is this frame.
    const shot = await page.locator("#aiagent-chat").screenshot({ animations: "disabled" });
    expect(shot.length).toBeGreaterThan(1000);
    if (process.env.UPDATE_DOCS === "1") {
      mkdirSync(new URL("../../docs/", import.meta.url), { recursive: true });
      await page
        .locator("#aiagent-chat")
        .screenshot({ path: new URL("../../docs/frame.png", import.meta.url).pathname, animations: "disabled" });
    }

    await page.reload();
    frame = await chatFrame(page);
    const texts = await frame.locator(".msg .msg__bubble").allTextContents();
    expect(texts).toHaveLength(4);
    expect(texts[0]).toBe("Hello");
    expect(texts[2]).toBe("How long does shipping take?");
    expect(texts[3]).toContain("Orders ship within 2 business days");
    await frame.locator(".msg--assistant").nth(1).getByRole("link", { name: "Shipping" }).waitFor();
    await context.close();
  });

  test("the frame answers with the frame-ancestors policy of the chatbot, no referrer and no caching", async () => {
    const res = await fetch(`${fx.e.service.url}/chatbot-iframe/${fx.e.account.chatbotId}?user_id=u1&access_token=x`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`frame-ancestors ${fx.e.hostOrigin}`);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    // The page itself never carries the token: the script reads it from the address.
    expect(html).not.toContain("access_token=x");
    expect(html).toContain(`data-host-origin="${fx.e.hostOrigin}"`);

    const js = await fetch(`${fx.e.service.url}/chatbot-iframe/assets/frame.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
    const entry = await js.text();
    expect(entry.length).toBeGreaterThan(1000);
    expect(html).toContain('<script type="module" src="/chatbot-iframe/assets/frame.js"></script>');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")/);

    // The chunks it loads on demand come from the same path, with the same headers; nothing else does.
    const chunks = [...entry.matchAll(/import\("\.\/([\w-]+\.js)"\)/g)].map((m) => m[1]!);
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const base = `${fx.e.service.url}/chatbot-iframe/assets/`;
    for (const name of chunks) {
      const c = await fetch(base + name);
      expect(c.status, name).toBe(200);
      for (const h of ["content-type", "cache-control", "x-content-type-options"])
        expect(c.headers.get(h), `${name} ${h}`).toBe(js.headers.get(h));
      expect(c.headers.get("etag"), name).toMatch(/^"[\w-]{22}"$/);
      expect((await c.text()).length, name).toBeGreaterThan(100);
    }
    for (const name of ["no-such-chunk.js", "..%2F..%2Fpackage.json%00.js", "%2e%2e%2fbundle.js", "..%5Cmain.js"]) {
      const c = await fetch(base + name);
      expect(c.status, name).toBe(404);
      expect(c.headers.get("content-type"), name).not.toContain("javascript");
      expect(await c.text(), name).not.toContain("import");
    }
  });

  test("an unknown chatbot is a 404 page, and a host_origin the chatbot does not allow is refused", async () => {
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const res = await fetch(`${fx.e.service.url}/chatbot-iframe/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(await res.text()).toContain("Chat not found");
    }
    const bad = await fetch(
      `${fx.e.service.url}/chatbot-iframe/${fx.e.account.chatbotId}?host_origin=${encodeURIComponent("https://evil.example")}`,
    );
    expect(bad.status).toBe(400);
    const good = await fetch(
      `${fx.e.service.url}/chatbot-iframe/${fx.e.account.chatbotId}?host_origin=${encodeURIComponent(fx.e.hostOrigin)}`,
    );
    expect(good.status).toBe(200);
  });

  test("a page whose origin the chatbot does not allow cannot show the frame", async () => {
    const context = await newContext(fx.browser);
    const page = await context.newPage();
    const frameResponses: { status: number; csp: string }[] = [];
    page.on("response", (r) => {
      if (r.url().includes("/chatbot-iframe/") && !r.url().includes("/assets/"))
        frameResponses.push({ status: r.status(), csp: r.headers()["content-security-policy"] ?? "" });
    });
    // The same host page under another name: http://localhost:<port> is not among the allowed origins.
    const other = fx.e.host.url.replace("127.0.0.1", "localhost");
    await page.goto(`${other}/`, { waitUntil: "load" });
    await page.locator("#aiagent-chat").waitFor();
    // The service did answer; the browser refused to show the answer in this page.
    expect(frameResponses).toHaveLength(1);
    expect(frameResponses[0]!.csp).toContain(`frame-ancestors ${fx.e.hostOrigin}`);
    const chat = page.frames().filter((f) => f !== page.mainFrame());
    expect(chat).toHaveLength(1);
    expect(chat[0]!.url()).not.toContain("/chatbot-iframe/");
    expect(await chat[0]!.locator("#chat").count()).toBe(0);
    await context.close();
  });
});

describe.runIf(canRun)("the service's own demo at /demo", () => {
  test("on first start it embeds the frame for the demo chatbot and refreshes through its server-side route", async () => {
    let creds: { chatbotId: string; clientApiKey: string } | undefined;
    const s = await startServer({ overrides: { extraRoutes: (app) => frameRoutes(app, { demo: () => creds }) } });
    try {
      // Without the demo's credentials (a database with no demo account) the page says how to get a key.
      const before = await fetch(`${s.url}/demo`);
      expect(before.status).toBe(200);
      expect(await before.text()).toContain("aiagent api-key create");

      creds = await bootstrapDemo(s.app, s.url);
      expect(creds).toBeDefined();
      const context = await newContext(fx.browser);
      const page = await context.newPage();
      await page.goto(`${s.url}/demo`);
      const frame = await chatFrame(page);
      await typeMessage(frame, "Can I return an item?");
      await frame
        .locator(".msg--assistant", { hasText: "return any item within 30 days" })
        .getByRole("link", { name: "Returns" })
        .waitFor();

      // The refresh route gives the page an access token only, and only to its own session.
      const refreshed = await page.evaluate(async () => {
        const r = await fetch("/demo/refresh", { method: "POST", headers: { "x-requested-with": "aiagent-host" } });
        return { status: r.status, body: (await r.json()) as Record<string, unknown> };
      });
      expect(refreshed.status).toBe(200);
      expect(Object.keys(refreshed.body).sort()).toEqual(["access_token", "expires_at"]);
      const anonymous = await fetch(`${s.url}/demo/refresh`, {
        method: "POST",
        headers: { "x-requested-with": "aiagent-host" },
      });
      expect(anonymous.status).toBe(401);
      const cookies = JSON.stringify(await context.cookies());
      expect(cookies).not.toContain(creds!.clientApiKey);
      expect(cookies).not.toContain("rt_");
      await context.close();
    } finally {
      await s.close(true);
    }
  });
});
