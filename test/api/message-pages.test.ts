import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { createLogger } from "../../src/log.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { getJson } from "../helpers/http.js";
import { rpcClients } from "../helpers/rpc.js";

// Pages of messages are remembered once read (src/domain/conversation/page-cache.ts). What a reader sees must be
// exactly what the store holds: a re-read shows every message written since, whoever wrote it, and a remembered
// page is still behind the access check.

const fx = serverForFile();
let frameToken: string;
let conversationId: string;
/** A second instance of the service on the same database, as another process or server would be. */
let other: App;

beforeAll(async () => {
  frameToken = (await issueTokens(fx.s.url, fx.a, "pages-user")).access_token;
  conversationId = (await send(fx.s.url, frameToken, "first question")).conversation_id;
  other = await buildApp(fx.s.app.config, createLogger("silent"), { dispatch: false });
});
afterAll(async () => {
  await other?.close();
});

async function page(offset: number, limit: number, token = frameToken) {
  const r = await getJson(fx.s.url, "/get_messages_for_conversation", {
    conversation_id: conversationId,
    offset: String(offset),
    limit: String(limit),
    access_token: token,
  });
  expect(r.status).toBe(200);
  return {
    orders: r.body.messages.map((m: { message_order: number }) => m.message_order) as number[],
    hasMore: r.body.has_more as boolean,
    contents: r.body.messages.map((m: { content: string }) => m.content) as string[],
  };
}

describe("re-reading pages of messages", () => {
  it("a re-read tail page shows the messages written since; a full page reads the same every time", async () => {
    expect(await page(0, 3)).toMatchObject({ orders: [1, 2], hasMore: false });
    expect(await page(0, 3)).toMatchObject({ orders: [1, 2], hasMore: false });
    // The empty tail a polling frame reads, then again once something is written.
    expect(await page(2, 3)).toMatchObject({ orders: [], hasMore: false });
    await send(fx.s.url, frameToken, "second question", conversationId);
    expect(await page(0, 3)).toMatchObject({ orders: [1, 2, 3], hasMore: true });
    expect(await page(2, 3)).toMatchObject({ orders: [3, 4], hasMore: false });
    const full = await page(0, 3);
    expect(full).toMatchObject({ orders: [1, 2, 3], hasMore: true });
    expect(full.contents[0]).toBe("first question");
    expect(full.contents[2]).toBe("second question");
    // A page that ends exactly at the last message has nothing after it, until one more is written.
    expect(await page(0, 4)).toMatchObject({ orders: [1, 2, 3, 4], hasMore: false });
    await send(fx.s.url, frameToken, "third question", conversationId);
    expect(await page(0, 4)).toMatchObject({ orders: [1, 2, 3, 4], hasMore: true });
    expect(await page(4, 4)).toMatchObject({ orders: [5, 6], hasMore: false });
  });

  it("a message written by another instance on the same database is in the next re-read", async () => {
    const before = await page(0, 100);
    const n = before.orders.length;
    await page(0, 100);
    const written = await other.conversations.actions.reply(
      ownerOf(fx.a),
      conversationId,
      "Sam from support, via instance B",
    );
    expect(written.messageOrder).toBe(n + 1);
    const after = await page(0, 100);
    expect(after.orders).toEqual([...before.orders, n + 1]);
    expect(after.contents.at(-1)).toBe("Sam from support, via instance B");
    // Over Connect, through the same remembered page.
    const { conversations } = rpcClients(fx.s.url, "connect-binary");
    const r = await conversations.getMessagesForConversation(
      { conversationId, limit: 100 },
      { headers: { authorization: `Bearer ${frameToken}` } },
    );
    expect(r.messages.map((m) => m.messageOrder)).toEqual(after.orders);
  });

  it("a remembered page is answered to its conversation's user and account only", async () => {
    await page(0, 100);
    const stranger = (await issueTokens(fx.s.url, fx.a, "another-user")).access_token;
    const r = await getJson(fx.s.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: stranger,
    });
    expect(r.status).toBe(404);
    const b = await fx.s.account();
    const foreign = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: conversationId },
      { authorization: `Bearer ${await idToken(fx.s.url, b)}` },
    );
    expect(foreign.status).toBe(404);
    const own = await getJson(
      fx.s.url,
      "/get_messages_for_conversation",
      { conversation_id: conversationId },
      { authorization: `Bearer ${await idToken(fx.s.url, fx.a)}` },
    );
    expect(own.status).toBe(200);
  });
});
