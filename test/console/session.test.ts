import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

let s: TestServer;
let acc: TestAccount;

beforeAll(async () => {
  s = await startServer({
    env: { AIAGENT_RATE_LIMIT_PASSWORD_FAILURES: "3" },
    overrides: { extraRoutes: consoleAndFrameRoutes },
  });
  acc = await s.account();
});
afterAll(async () => {
  await s?.close(true);
});

const CSRF = { "x-aiagent-csrf": "1" };

function signIn(body: unknown, headers: Record<string, string> = CSRF) {
  return fetch(`${s.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function getAccount(headers: Record<string, string>) {
  return fetch(`${s.url}/aiagent.v1.AccountService/GetAccount`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });
}

async function sessionCookie(): Promise<string> {
  const r = await signIn({ email: acc.email, password: acc.password });
  expect(r.status).toBe(204);
  return r.headers.get("set-cookie")!.split(";")[0]!;
}

describe("the console's session", () => {
  test("the shell is served with a strict CSP, never framed, never cached", async () => {
    const r = await fetch(`${s.url}/console/inbox`);
    expect(r.status).toBe(200);
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(r.headers.get("cache-control")).toBe("no-store");
    const html = await r.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
    const js = await fetch(`${s.url}/console/assets/console.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
  });

  test("sign-in sets an HttpOnly, SameSite=Strict cookie holding the ID token, and answers no token to script", async () => {
    const r = await signIn({ email: acc.email, password: acc.password });
    expect(r.status).toBe(204);
    expect(await r.text()).toBe("");
    const c = r.headers.get("set-cookie")!;
    expect(c).toMatch(/^aiagent_console=ey[\w-]+\.[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(r.headers.get("cache-control")).toBe("no-store");
  });

  test("a sign-in without the CSRF header, or from another site, is refused", async () => {
    expect((await signIn({ email: acc.email, password: acc.password }, {})).status).toBe(403);
    const cross = await signIn(
      { email: acc.email, password: acc.password },
      { ...CSRF, origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(cross.status).toBe(403);
  });

  test("the cookie opens ID-token RPCs only with the CSRF header and from this origin", async () => {
    const cookie = await sessionCookie();
    expect((await getAccount({ cookie, ...CSRF })).status).toBe(200);
    expect((await getAccount({ cookie })).status).toBe(401);
    expect((await getAccount({ cookie, ...CSRF, "sec-fetch-site": "cross-site" })).status).toBe(401);
    expect((await getAccount({ cookie, ...CSRF, origin: "https://evil.example" })).status).toBe(401);
    // Fetch Metadata decides where the browser sends it (behind a proxy the Host may differ from the page's origin).
    const proxied = { cookie, ...CSRF, "sec-fetch-site": "same-origin", origin: "https://console.example" };
    expect((await getAccount(proxied)).status).toBe(200);
    // A bearer token is what the call is judged by when there is one.
    expect((await getAccount({ cookie, ...CSRF, authorization: "Bearer nope" })).status).toBe(401);
  });

  test("sign-out clears the cookie", async () => {
    const r = await fetch(`${s.url}/console/session`, { method: "DELETE", headers: CSRF });
    expect(r.status).toBe(204);
    expect(r.headers.get("set-cookie")).toMatch(/^aiagent_console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/);
  });

  test("wrong passwords are counted like get_id_token's: the account's password log-in is blocked", async () => {
    const other = await s.account();
    for (let i = 0; i < 3; i++)
      expect((await signIn({ email: other.email, password: "wrong password" })).status).toBe(401);
    const blocked = await signIn({ email: other.email, password: other.password });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // The same counter as the token route: get_id_token with the password is blocked too.
    const t = await fetch(`${s.url}/get_id_token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_email_id: other.email, password: other.password }),
    });
    expect(t.status).toBe(429);
  });

  test("the embed page's preview frames the chat for the account's admins only, with a token of its own", async () => {
    // The console's script asks OpenPreview (an RPC of the contract, admins only) for the preview's address.
    const open = (chatbotId: string, headers: Record<string, string>) =>
      fetch(`${s.url}/v1/account/chatbots/${chatbotId}/preview`, { method: "POST", headers });
    expect((await open(acc.chatbotId, CSRF)).status).toBe(401);
    const cookie = await sessionCookie();
    const r = await open(acc.chatbotId, { cookie, ...CSRF });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const location = ((await r.json()) as { data: { frame_path: string } }).data.frame_path;
    expect(location).toMatch(/^\/console\/preview\/[0-9a-f-]{36}\?access_token=ey/);
    const page = await fetch(`${s.url}${location}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'self'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    // The page without a token, or asked for by another site, shows nothing.
    const url = `${s.url}/console/preview/${acc.chatbotId}`;
    expect((await fetch(url, { redirect: "manual", headers: { cookie } })).status).toBe(401);
    const cross = await fetch(`${s.url}${location}`, { headers: { "sec-fetch-site": "cross-site" } });
    expect(cross.status).toBe(401);
    // Another account's chatbot is not there.
    const other = await s.account();
    const theirs = await open(other.chatbotId, { cookie, ...CSRF });
    expect(theirs.status).toBe(404);
  });

  test("a sign-in body over the JSON routes' limit is answered 413 naming the limit, like any RPC's", async () => {
    const r = await fetch(`${s.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json", ...CSRF },
      body: JSON.stringify({ email: acc.email, password: "x".repeat(70 * 1024) }),
    });
    expect(r.status).toBe(413);
    expect(await r.json()).toMatchObject({ code: "resource_exhausted", message: "body: must be at most 65536 bytes" });
  });

  test("a sign-in body that is not JSON, or lacks a field, is refused naming what was wrong", async () => {
    const form = await fetch(`${s.url}/console/session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...CSRF },
      body: "email=a&password=b",
    });
    expect(form.status).toBe(400);
    expect(((await form.json()) as { message: string }).message).toMatch(/^content-type: /);
    const empty = await signIn({ email: acc.email });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { message: string }).message).toMatch(/^password: /);
  });
});
