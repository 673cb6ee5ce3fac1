import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/webhooks/addresses.js";
import { httpSender } from "../../src/webhooks/http-sender.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function call(url: string, method: string, path: string, token: string | undefined, body?: unknown) {
  const r = await fetch(url + path, {
    method,
    headers: { "content-type": "application/json", ...(token ? auth(token) : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.text();
  return { status: r.status, body: text === "" ? undefined : JSON.parse(text) } as JsonResponse;
}

describe("webhook endpoints: who may reach them", () => {
  let s: TestServer;
  let tokenA: string;
  let tokenB: string;
  let operatorA: string;
  let endpointA: string;
  let deliveryA: string;
  let secretA: string;

  beforeAll(async () => {
    s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "20" } });
    const a = await s.account();
    const b = await s.account();
    tokenA = await idToken(s.url, a);
    tokenB = await idToken(s.url, b);
    operatorA = (await addMember(s.url, tokenA, `operator-${Date.now()}@example.com`, "operator")).idToken;
    const ep = await postJson(s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/a" }, auth(tokenA));
    endpointA = ep.body.data.endpoint.endpoint_id;
    secretA = ep.body.data.secret;
    const t = await issueTokens(s.url, a, "customer-a");
    await send(s.url, t.access_token, "only for account A");
    const d = await getJson(s.url, `/v1/account/webhooks/${endpointA}/deliveries`, {}, auth(tokenA));
    deliveryA = d.body.data.deliveries[0].delivery_id;
  });
  afterAll(async () => {
    await s.close(true);
  });

  // Every RPC of WebhookService on account A's endpoint, as JSON route calls.
  const routes = () => [
    {
      name: "CreateWebhookEndpoint",
      method: "POST",
      path: "/v1/account/webhooks",
      body: { url: "http://127.0.0.1:9/b" },
    },
    { name: "ListWebhookEndpoints", method: "GET", path: "/v1/account/webhooks" },
    {
      name: "UpdateWebhookEndpoint",
      method: "PATCH",
      path: `/v1/account/webhooks/${endpointA}`,
      body: { description: "x" },
    },
    { name: "DeleteWebhookEndpoint", method: "DELETE", path: `/v1/account/webhooks/${endpointA}` },
    { name: "ListEvents", method: "GET", path: "/v1/account/events" },
    { name: "ListWebhookDeliveries", method: "GET", path: `/v1/account/webhooks/${endpointA}/deliveries` },
    { name: "RotateWebhookSecret", method: "POST", path: `/v1/account/webhooks/${endpointA}/rotate_secret`, body: {} },
    {
      name: "ResendWebhookDelivery",
      method: "POST",
      path: `/v1/account/webhooks/${endpointA}/deliveries/${deliveryA}/resend`,
      body: {},
    },
  ];

  it("without an ID token every RPC answers 401; an operator's gets 403 (admins only)", async () => {
    for (const r of routes()) {
      expect((await call(s.url, r.method, r.path, undefined, r.body)).status, r.name).toBe(401);
      expect((await call(s.url, r.method, r.path, operatorA, r.body)).status, r.name).toBe(403);
    }
  });

  it("another account's admin finds none of account A's endpoints, deliveries or events (BOLA)", async () => {
    for (const r of routes().filter((x) => x.path.includes(endpointA)))
      expect((await call(s.url, r.method, r.path, tokenB, r.body)).status, r.name).toBe(404);
    // A's delivery id under B's own endpoint is not found either.
    const own = await postJson(s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/b" }, auth(tokenB));
    const mine = own.body.data.endpoint.endpoint_id;
    const cross = await call(s.url, "POST", `/v1/account/webhooks/${mine}/deliveries/${deliveryA}/resend`, tokenB, {});
    expect(cross.status).toBe(404);
    const list = await getJson(s.url, "/v1/account/webhooks", {}, auth(tokenB));
    expect(list.body.data.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id)).toEqual([mine]);
    const events = await getJson(s.url, "/v1/account/events", {}, auth(tokenB));
    expect(events.body.data.events).toEqual([]);
    // A's own endpoint is untouched.
    const a = await getJson(s.url, "/v1/account/webhooks", {}, auth(tokenA));
    expect(a.body.data.endpoints).toHaveLength(1);
    expect(a.body.data.endpoints[0].description).toBe("");
  });

  it("the secret is answered once: never listed, never logged", async () => {
    const list = await getJson(s.url, "/v1/account/webhooks", {}, auth(tokenA));
    expect(JSON.stringify(list.body)).not.toContain(secretA.slice(6, 20));
    expect(s.logs.join("\n")).not.toContain(secretA.slice(6, 20));
    const row = s.app.store.webhooks.endpoint(endpointA);
    expect(JSON.stringify(await row)).not.toContain(secretA.slice(6, 20));
  });

  it("a cursor, limit or type that is not one answers invalid_argument", async () => {
    const queries: Record<string, string | number>[] = [
      { after: "abc" },
      { limit: 0 },
      { limit: 1001 },
      { types: "message.deleted" },
    ];
    for (const q of queries)
      expect((await getJson(s.url, "/v1/account/events", q, auth(tokenA))).status, JSON.stringify(q)).toBe(400);
  });
});

describe("webhook targets outside development (server-side request forgery)", () => {
  let s: TestServer;
  let token: string;
  const names: Record<string, string[]> = {
    "internal.example": ["192.168.1.5"],
    "mixed.example": ["93.184.216.34", "10.1.2.3"],
    "public.example": ["93.184.216.34"],
  };

  beforeAll(async () => {
    s = await startServer({
      env: { NODE_ENV: "production", AIAGENT_SECRETS: "a-test-secret-for-production-mode-0123456789" },
      overrides: { resolve: async (host) => names[host] ?? [], dispatch: false },
    });
    token = await idToken(s.url, await s.account());
  });
  afterAll(async () => {
    await s.close(true);
  });

  it("refuses private, loopback and link-local addresses, literal or resolved, and plain http", async () => {
    for (const url of [
      "https://10.0.0.1/hooks",
      "https://127.0.0.1/hooks",
      "https://[::1]/hooks",
      "https://169.254.169.254/latest/meta-data",
      "https://[fe80::1]/hooks",
      "https://[::ffff:192.168.0.1]/hooks",
      "https://internal.example/hooks",
      "https://mixed.example/hooks",
      "https://nowhere.example/hooks",
      "http://127.0.0.1:8080/hooks",
      "http://public.example/hooks",
      "https://user:pw@public.example/hooks",
    ]) {
      const r = await postJson(s.url, "/v1/account/webhooks", { url }, auth(token));
      expect(r.status, url).toBe(400);
      expect(r.body.details[0].debug.metadata.field, url).toBe("url");
    }
    const ok = await postJson(s.url, "/v1/account/webhooks", { url: "https://public.example/hooks" }, auth(token));
    expect(ok.status).toBe(200);
    // Changing the URL later is checked the same way.
    const id = ok.body.data.endpoint.endpoint_id;
    const moved = await call(s.url, "PATCH", `/v1/account/webhooks/${id}`, token, {
      url: "https://internal.example/x",
    });
    expect(moved.status).toBe(400);
  });

  it("checks the address again at connection: a name that now resolves to loopback is not connected to", async () => {
    const sendTo = httpSender({ development: false, timeoutMs: 2000 });
    const r = await sendTo("https://localhost:1/hooks", {}, "{}", new AbortController().signal);
    expect(r.status).toBe(0);
    expect(r.error).toMatch(/EADDRNOTPUBLIC|not a public address/);
    const literal = await sendTo("https://127.0.0.1:1/hooks", {}, "{}", new AbortController().signal);
    expect(literal.error).toMatch(/not a public address/);
  });

  it("classifies addresses", () => {
    for (const a of [
      "10.1.1.1",
      "172.16.0.1",
      "192.168.0.1",
      "127.0.0.1",
      "169.254.1.1",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
    ])
      expect(isPublicAddress(a), a).toBe(false);
    for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700::1111"]) expect(isPublicAddress(a), a).toBe(true);
  });
});
