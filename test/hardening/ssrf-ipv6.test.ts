import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publicOnlyPost } from "../../src/agents/guarded-post.js";
import { isPublicAddress } from "../../src/webhooks/addresses.js";
import { idToken } from "../helpers/flows.js";
import { postJson, requestJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";

// IPv6 forms that embed or translate to a private IPv4 address: each was accepted by the hand-written ranges.
const EMBEDDED = [
  "::127.0.0.1", // IPv4-compatible, dotted
  "::a9fe:a9fe", // IPv4-compatible: 169.254.169.254, the cloud metadata service
  "::ffff:127.0.0.1", // IPv4-mapped
  "::ffff:0:7f00:1", // rfc6145 (IPv4-translated)
  "64:ff9b::7f00:1", // NAT64, rfc6052
  "64:ff9b:1::7f00:1", // NAT64 local-use prefix, 64:ff9b:1::/48 (RFC 8215)
  "2002:7f00:1::1", // 6to4 of 127.0.0.1
  "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo
  "fd00::a9fe:a9fe", // unique-local
];

describe("the SSRF guard classifies with ipaddr.js", () => {
  it("refuses the nine IPv6 forms that embed IPv4, and the other special ranges; keeps public unicast", () => {
    for (const a of [...EMBEDDED, "fe80::1", "::", "::1", "100::1", "2001:db8::1", "ff02::1", "fe80::1%eth0"])
      expect(isPublicAddress(a), a).toBe(false);
    for (const a of ["10.1.1.1", "100.64.0.1", "169.254.169.254", "192.0.2.1", "198.18.0.1", "255.255.255.255"])
      expect(isPublicAddress(a), a).toBe(false);
    for (const a of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPublicAddress(a), a).toBe(true);
  });

  it("refuses the non-global ranges ipaddr.js calls unicast: site-local, 3fff::/20 and 5f00::/16 (issue 47)", () => {
    for (const a of ["fec0::1", "feff:ffff::1", "3fff::1", "3fff:fff:ffff::1", "5f00::1", "5f00:ffff::1"])
      expect(isPublicAddress(a), a).toBe(false);
    // their neighbours stay public
    for (const a of ["3fff:1000::1", "5f01::1", "2a00:1450::1"]) expect(isPublicAddress(a), a).toBe(true);
  });
});

describe("in production, webhook URLs and agent base URLs at these addresses are refused", () => {
  let s: TestServer;
  let auth: Record<string, string>;
  let chatbotId: string;
  beforeAll(async () => {
    s = await startServer({
      env: { NODE_ENV: "production", AIAGENT_SECRETS: "a-test-secret-for-production-mode-0123456789" },
      overrides: { dispatch: false },
    });
    const a = await s.account();
    chatbotId = a.chatbotId;
    auth = { authorization: `Bearer ${await idToken(s.url, a)}` };
  });
  afterAll(() => s?.close(true));

  it.each([...EMBEDDED, "fec0::1", "3fff::1", "5f00::1"])(
    "[%s] as a webhook URL and as an agent base_url: 400 naming the field",
    async (address) => {
      const hook = await postJson(s.url, "/v1/account/webhooks", { url: `https://[${address}]/hooks` }, auth);
      expect(hook.status).toBe(400);
      expect(hook.body.details[0].debug.metadata.field).toBe("url");
      const agent = await requestJson(s.url, "PATCH", `/v1/account/chatbots/${chatbotId}`, auth, {
        agent: { kind: "openai_compatible", base_url: `https://[${address}]/v1`, model: "m" },
      });
      expect(agent.status).toBe(400);
      expect(agent.body.message).toContain("agent.base_url");
    },
  );
});

describe("the agent client checks the address at connection time, like the webhook sender", () => {
  let server: ReturnType<typeof createServer>;
  let port: number;
  let reached = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      reached++;
      res.end("{}");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("a name that now resolves to loopback, or a literal private address, is never connected to", async () => {
    const post = publicOnlyPost();
    const signal = new AbortController().signal;
    await expect(post(`http://localhost:${port}/v1/chat/completions`, {}, "{}", signal)).rejects.toThrow(
      /non-public address/,
    );
    await expect(post(`http://127.0.0.1:${port}/v1/chat/completions`, {}, "{}", signal)).rejects.toThrow(
      /not a public address/,
    );
    await expect(post(`http://[::ffff:7f00:1]:${port}/v1/chat/completions`, {}, "{}", signal)).rejects.toThrow(
      /not a public address/,
    );
    expect(reached).toBe(0);
  });
});
