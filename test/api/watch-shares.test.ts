import { afterAll, describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { startServer, type TestAccount } from "../helpers/server.js";

// Visitors can never lock the team out (issue 44): frames draw on their own share of the instance and of the
// account, so the team's inboxes open while frames hold their whole share; and one customer's tabs are capped.

const fx = serverForFile({
  server: {
    env: {
      AIAGENT_WATCH_STREAMS: "12",
      AIAGENT_WATCH_FRAME_STREAMS: "8",
      AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT: "6",
      AIAGENT_WATCH_STREAMS_PER_CUSTOMER: "2",
    },
  },
});
const open: NdjsonReader[] = [];
afterAll(async () => {
  await Promise.all(open.map((r) => r.cancel().catch(() => undefined)));
});

async function frame(acc: TestAccount, userId: string, token?: string): Promise<NdjsonReader> {
  const t = token ?? (await issueTokens(fx.s.url, acc, userId)).access_token;
  const conv = await send(fx.s.url, t, "hello");
  const q = { conversation_id: conv.conversation_id, after_message_order: "2", access_token: t };
  const r = await openNdjson(`${fx.s.url}/watch_conversation?${new URLSearchParams(q)}`);
  open.push(r);
  return r;
}

async function inbox(acc: TestAccount): Promise<NdjsonReader> {
  const r = await openNdjson(`${fx.s.url}/watch_account?${new URLSearchParams({ user_email_id: acc.email })}`, {
    authorization: `Bearer ${await idToken(fx.s.url, acc)}`,
  });
  open.push(r);
  return r;
}

describe("frames and the team's streams draw on separate shares", () => {
  test("an account's visitors fill its frames' share: the next visitor waits, its team's inbox opens", async () => {
    for (let i = 0; i < 6; i++) expect((await frame(fx.a, `share-${i}`)).response.status).toBe(200);
    const refused = await frame(fx.a, "share-over");
    expect(refused.response.status).toBe(429);
    expect(((await refused.next()) as { message?: string }).message).toContain("frames");
    const team = await inbox(fx.a);
    expect(team.response.status).toBe(200);
    expect((await team.next())?.result?.subscribed_at).toBeDefined();
  });

  test("frames hold the instance's whole frames' share: no frame opens, the teams' inboxes still do", async () => {
    const b = await fx.s.account();
    // Six of a's frames are open; two more of b's fill the instance's frames' share (8).
    for (let i = 0; i < 2; i++) expect((await frame(b, `fill-${i}`)).response.status).toBe(200);
    const refused = await frame(b, "fill-over");
    expect(refused.response.status).toBe(429);
    expect(((await refused.next()) as { message?: string }).message).toContain("too many watch streams");
    for (const acc of [fx.a, b]) {
      const team = await inbox(acc);
      expect(team.response.status).toBe(200);
      expect((await team.next())?.result?.subscribed_at).toBeDefined();
    }
  });
});

describe("one customer's streams are capped whatever tokens they hold", () => {
  test("a third tab with a fresh token of the same customer is refused", async () => {
    const c = await startServer({ env: { AIAGENT_WATCH_STREAMS_PER_CUSTOMER: "2" } });
    try {
      const acc = await c.account();
      const tokens = await Promise.all([0, 1, 2].map(() => issueTokens(c.url, acc, "many-tabs")));
      const conv = await send(c.url, tokens[0]!.access_token, "hello");
      const statuses: number[] = [];
      const readers: NdjsonReader[] = [];
      for (const t of tokens) {
        const q = { conversation_id: conv.conversation_id, after_message_order: "2", access_token: t.access_token };
        const r = await openNdjson(`${c.url}/watch_conversation?${new URLSearchParams(q)}`);
        readers.push(r);
        statuses.push(r.response.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(((await readers[2]!.next()) as { message?: string }).message).toContain("one customer");
      await Promise.all(readers.map((r) => r.cancel().catch(() => undefined)));
    } finally {
      await c.close(true);
    }
  });
});
