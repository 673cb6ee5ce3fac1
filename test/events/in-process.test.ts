import { describe, expect, test } from "vitest";
import { InProcessConversationEvents } from "../../src/events/in-process.js";

const message = (accountId: string, conversationId: string, _order: number) => ({ accountId, conversationId });

/** Counts the hints a listener gets (a hint carries nothing: the listener reads the log). */
function recorder() {
  const seen: string[] = [];
  let closed = 0;
  return {
    seen,
    closed: () => closed,
    listener: {
      changed: () => void seen.push("changed"),
      closed: () => void closed++,
    },
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("live-update hints within one process", () => {
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
    expect(one.seen).toEqual(["changed", "changed"]);
    expect(inbox.seen).toEqual(["changed", "changed", "changed"]);
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
    expect(r.seen).toEqual(["changed", "changed"]);
  });

  test("changedAll tells every listener, of conversations and of accounts (the channel reconnected)", () => {
    const events = new InProcessConversationEvents();
    const one = recorder();
    const inbox = recorder();
    events.subscribe({ conversationId: "c1" }, one.listener);
    events.subscribe({ accountId: "a2" }, inbox.listener);
    events.changedAll();
    expect([one.seen, inbox.seen]).toEqual([["changed"], ["changed"]]);
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
    expect(b.seen).toEqual(["changed"]);
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
