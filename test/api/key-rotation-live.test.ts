import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aiagentJson } from "../helpers/cli.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Two running instances on one SQLite file, and the real `aiagent keys rotate` beside them. Each instance has its
// own movable clock, so "within the refresh interval" is driven by moving time, not by waiting.
let s: TestServer;
let s2: TestServer;
let a: TestAccount;
beforeAll(async () => {
  s = await startServer();
  // The second instance looks at storage only hourly: what it learns below, it learns from the token's kid.
  s2 = await startServer({ dir: s.dir, env: { AIAGENT_SIGNING_KEY_REFRESH: "3600" } });
  a = await s.account({ knowledge: [{ title: "Hours", url: "https://shop.example/hours", snippet: "Open 9 to 5." }] });
});
afterAll(async () => {
  await s2.close();
  await s.close(true);
});

const kidOf = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString()) as { kid: string }).kid;
const published = async (server: TestServer) =>
  ((await getJson(server.url, "/.well-known/jwks.json")).body as { keys: { kid: string }[] }).keys.map((k) => k.kid);

describe("keys rotate reaches running servers", () => {
  it("within the refresh interval new tokens carry the new kid and JWKS publishes it; tokens of the old key still work", async () => {
    const before = await issueTokens(s.url, a, "u1");
    const oldKid = kidOf(before.access_token);
    const { kid } = await aiagentJson<{ kid: string }>(["keys", "rotate", "--db", s.dbPath]);
    expect(kid).not.toBe(oldKid);

    // The default interval is 30 s: once it has passed, the next use of the ring picks the rotation up.
    s.clock.advance(30_000);
    s2.clock.advance(30_000);
    expect(await published(s)).toEqual(expect.arrayContaining([oldKid, kid]));
    const after = await issueTokens(s.url, a, "u2");
    expect(kidOf(after.access_token)).toBe(kid);
    const refreshed = await postJson(s.url, "/ai_agent/refresh_token", {
      user_id: "u1",
      chatbot_id: a.chatbotId,
      refresh_token: before.refresh_token,
    });
    expect(kidOf(refreshed.body.data.access_token)).toBe(kid);

    // The other instance is far from its interval, yet accepts the new kid at once (it looks it up) ...
    expect((await send(s2.url, after.access_token, "hours?")).reply.content).toContain("Open 9 to 5");
    expect(await published(s2)).toContain(kid);
    // ... and both keep accepting tokens signed before the rotation until they expire.
    expect((await send(s.url, before.access_token, "hours?")).reply.content).toContain("Open 9 to 5");
    expect((await send(s2.url, before.access_token, "hours?")).reply.content).toContain("Open 9 to 5");
  });

  it("a token naming an unknown kid re-reads the keys at most once a second", async () => {
    const list = vi.spyOn(s2.app.store.signingKeys, "list");
    try {
      const good = (await issueTokens(s.url, a, "u3")).access_token;
      const [, payload, signature] = good.split(".");
      const forged = (kid: string) =>
        `${Buffer.from(JSON.stringify({ alg: "ES256", kid, typ: "at+jwt" })).toString("base64url")}.${payload}.${signature}`;
      const garbage = async (kid: string) =>
        (await postJson(s2.url, `/ai_agent/send_message?access_token=${forged(kid)}`, { content: "hi" })).status;
      // The clock stands still through the burst, a second past any earlier look: exactly one look, then none.
      s2.clock.freezeAt(s2.clock.now() + 1000);
      for (let i = 0; i < 50; i++) expect(await garbage(`nope-${i}`)).toBe(401);
      expect(list.mock.calls.length).toBe(1);
      // Just short of a second later it still does not look; at the second, the next unknown kid looks, once.
      s2.clock.advance(999);
      expect(await garbage("nope-x")).toBe(401);
      expect(list.mock.calls.length).toBe(1);
      s2.clock.advance(1);
      expect(await garbage("nope-y")).toBe(401);
      expect(await garbage("nope-z")).toBe(401);
      expect(list.mock.calls.length).toBe(2);
    } finally {
      s2.clock.resume();
      list.mockRestore();
    }
  });
});
