import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueTokens } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

let s: TestServer;
let a: TestAccount;
beforeAll(async () => {
  s = await startServer();
  a = await s.account({ origins: ["https://shop.example"] });
});
afterAll(() => s.close(true));

const page = (chatbotId: string, query: Record<string, string>) =>
  fetch(`${s.url}/chatbot-iframe/${chatbotId}?${new URLSearchParams(query)}`);

describe("GET /chatbot-iframe/{chatbot_id}", () => {
  it("serves the frame with the documented headers, and never puts the token into the page", async () => {
    const t = await issueTokens(s.url, a, "page-user");
    const r = await page(a.chatbotId, { user_id: "page-user", access_token: t.access_token });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toContain("frame-ancestors https://shop.example");
    expect(r.headers.get("referrer-policy")).toBe("no-referrer");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(await r.text()).not.toContain(t.access_token);
  });

  it("refuses an access token issued for another chatbot as an authorisation failure (403), with a readable page", async () => {
    const other = await s.account({ origins: ["https://shop.example"] });
    const t = await issueTokens(s.url, other, "page-user");
    const r = await page(a.chatbotId, { user_id: "page-user", access_token: t.access_token });
    expect(r.status).toBe(403);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const html = await r.text();
    expect(html).toContain("another chatbot");
    expect(html).not.toContain(t.access_token);
  });

  it("answers 404 for an unknown chatbot", async () => {
    const r = await page(crypto.randomUUID(), { user_id: "x" });
    expect(r.status).toBe(404);
  });
});
