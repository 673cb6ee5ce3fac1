import { describe, expect, test } from "vitest";
import type { ConversationEvent } from "../../src/domain/conversation/events.js";
import type { MessageRecord } from "../../src/domain/conversation/repository.js";
import { InProcessConversationEvents } from "../../src/events/in-process.js";

function message(accountId: string, conversationId: string, order: number): ConversationEvent {
  const m: MessageRecord = {
    messageId: `m${order}`,
    conversationId,
    conversationCreatedAt: 0,
    messageOrder: order,
    role: "user",
    content: `message ${order}`,
    toolCalls: "",
    documents: [],
    createdAt: order,
  };
  return { type: "message", accountId, conversationId, message: m };
}

function recorder() {
  const seen: string[] = [];
  let closed = 0;
  return {
    seen,
    closed: () => closed,
    listener: {
      event: (e: ConversationEvent) =>
        seen.push(`${e.conversationId}:${e.type === "message" ? e.message.messageOrder : "state"}`),
      closed: () => void closed++,
    },
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("live updates within one process", () => {
  test("a conversation's watchers and its account's watchers get its events in publish order; others get none", async () => {
    const events = new InProcessConversationEvents();
    const one = recorder();
    const inbox = recorder();
    const other = recorder();
    events.subscribe({ conversationId: "c1" }, one.listener);
    events.subscribe({ accountId: "a1" }, inbox.listener);
    events.subscribe({ accountId: "a2" }, other.listener);
    events.publish(message("a1", "c1", 1));
    events.publish(message("a1", "c2", 1));
    events.publish(message("a1", "c1", 2));
    await flush();
    expect(one.seen).toEqual(["c1:1", "c1:2"]);
    expect(inbox.seen).toEqual(["c1:1", "c2:1", "c1:2"]);
    expect(other.seen).toEqual([]);
  });

  test("events wait for the durability barrier: none is delivered before the write it reports is on disk", async () => {
    let sync: (() => void) | undefined;
    let waiting = false;
    const events = new InProcessConversationEvents(() => {
      if (!waiting) return undefined;
      return new Promise<void>((resolve) => {
        sync = () => {
          waiting = false;
          resolve();
        };
      });
    });
    const r = recorder();
    events.subscribe({ conversationId: "c1" }, r.listener);
    waiting = true;
    events.publish(message("a1", "c1", 1));
    events.publish(message("a1", "c1", 2));
    await flush();
    expect(r.seen).toEqual([]);
    sync!();
    await flush();
    expect(r.seen).toEqual(["c1:1", "c1:2"]);
  });

  test("unsubscribing stops delivery; closing ends every subscription and refuses new ones", async () => {
    const events = new InProcessConversationEvents();
    const a = recorder();
    const b = recorder();
    const stop = events.subscribe({ conversationId: "c1" }, a.listener);
    events.subscribe({ conversationId: "c1" }, b.listener);
    stop();
    events.publish(message("a1", "c1", 1));
    await flush();
    expect(a.seen).toEqual([]);
    expect(b.seen).toEqual(["c1:1"]);
    expect(events.listeners).toBe(1);

    events.close();
    expect(b.closed()).toBe(1);
    expect(events.listeners).toBe(0);
    const late = recorder();
    events.subscribe({ conversationId: "c1" }, late.listener);
    await flush();
    expect(late.closed()).toBe(1);
  });
});
