import { randomUUID } from "node:crypto";
import { expect, test } from "vitest";
import { messageEffect } from "../../src/domain/conversation/rules.js";
import { PAGE } from "../../src/domain/log/account-logs.js";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { openNdjson } from "../helpers/ndjson.js";
import { scaled } from "../helpers/time-scale.js";

// W4 of issue 44 as a test, on both back ends: a frame's watch resumed 10,000 messages behind catches up from the
// conversation's messages (not the account's event log, which does not hold them here), a page at a time: its
// state comes first, then every message once and in order; no read of the store takes more than a page (the memory
// a catch-up holds is a page, however long the backlog), and the process's memory grows by a bounded amount.

const BEHIND = 10_000;
const fx = serverForFile();

test(`a watch resumed ${BEHIND.toLocaleString("en")} messages behind: the state first, then each message once, in order, read in pages`, {
  timeout: scaled(300_000),
}, async () => {
  const t = await issueTokens(fx.s.url, fx.a, "catch-up");
  const conv = await send(fx.s.url, t.access_token, "hello");
  const id = conv.conversation_id as string;
  const store = fx.s.app.store;
  // The backlog, written straight into the conversation (500 to a unit of work): the account's log has none of it.
  const created = Date.now();
  for (let done = 0; done < BEHIND; ) {
    const n = Math.min(500, BEHIND - done);
    await store.transaction(async (tx) => {
      for (let i = 0; i < n; i++)
        await tx.conversations.append(
          id,
          {
            messageId: randomUUID(),
            role: "assistant",
            content: `backlog ${done + i}`,
            toolCalls: "",
            documents: [],
            createdAt: created + done + i,
          },
          messageEffect("assistant"),
        );
    });
    done += n;
  }
  // Every read of the conversation's messages, by its size.
  const reads: number[] = [];
  const messages = store.conversations.messages;
  store.conversations.messages = async (...args) => {
    const page = await messages.apply(store.conversations, args);
    reads.push(page.messages.length);
    return page;
  };
  try {
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const q = new URLSearchParams({ conversation_id: id, after_message_order: "2", access_token: t.access_token });
    const r = await openNdjson(`${fx.s.url}/watch_conversation?${q}`);
    expect(r.response.status).toBe(200);
    const first = await r.next();
    expect(first?.result?.conversation?.conversation_id, "the state first").toBe(id);
    const orders: number[] = [];
    while (orders.length < BEHIND) {
      const line = await r.next();
      expect(line?.error, JSON.stringify(line?.error)).toBeUndefined();
      expect(line, `the stream ended after ${orders.length} messages`).not.toBeNull();
      const m = line!.result?.message;
      if (m) orders.push(m.message_order);
      if (orders.length % 1000 === 0) rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }
    await r.cancel();
    // Each message once, in order: 3, 4, …, 10,002.
    expect(orders[0]).toBe(3);
    expect(orders.every((o, i) => o === 3 + i)).toBe(true);
    // In pages: at least BEHIND ÷ PAGE reads, none larger than a page.
    expect(reads.length).toBeGreaterThanOrEqual(BEHIND / PAGE);
    expect(Math.max(...reads)).toBeLessThanOrEqual(PAGE);
    // Server and client share this process: the growth of both stays far below holding the backlog many times over.
    expect(rssPeak - rssBefore).toBeLessThan(100 * 1024 * 1024);
  } finally {
    store.conversations.messages = messages;
  }
});
