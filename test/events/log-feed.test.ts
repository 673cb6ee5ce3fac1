import { describe, expect, test } from "vitest";
import { LogFeed } from "../../src/domain/log/log-feed.js";

/** Counts the hints a listener gets (a hint carries nothing: the listener reads the log). */
function recorder() {
  const seen: string[] = [];
  let closed = 0;
  return {
    seen,
    closed: () => closed,
    listener: { changed: () => void seen.push("changed"), closed: () => void closed++ },
  };
}

const at = (accountId: string, conversationId: string) => ({ accountId, conversationId });

describe("the feed of event-log announcements within one instance", () => {
  test("a conversation's and its account's watchers hear its appends; others none; the dispatcher hears all", () => {
    const feed = new LogFeed();
    const one = recorder();
    const inbox = recorder();
    const other = recorder();
    let dispatcher = 0;
    feed.subscribe({ conversationId: "c1" }, one.listener);
    feed.subscribe({ accountId: "a1" }, inbox.listener);
    feed.subscribe({ accountId: "a2" }, other.listener);
    feed.onAdvanced(() => void dispatcher++);
    feed.advanced([at("a1", "c1"), at("a1", "c2")]);
    feed.advanced([at("a1", "c1")]);
    feed.advanced([at("a3", "")]);
    expect(one.seen).toEqual(["changed", "changed"]);
    expect(inbox.seen).toEqual(["changed", "changed", "changed"]);
    expect(other.seen).toEqual([]);
    expect(dispatcher).toBe(3);
  });

  test("an append that recorded no webhook delivery tells its watchers but wakes no dispatcher", () => {
    const feed = new LogFeed();
    const one = recorder();
    let dispatcher = 0;
    feed.subscribe({ conversationId: "c1" }, one.listener);
    feed.onAdvanced(() => void dispatcher++);
    feed.advanced([at("a1", "c1")], false);
    expect([one.seen, dispatcher]).toEqual([["changed"], 0]);
    feed.advanced([at("a1", "c1")], true);
    feed.advanced(undefined, true);
    expect([one.seen.length, dispatcher]).toEqual([3, 2]);
  });

  test("'anything may have changed' (announcements lost) tells every watcher", () => {
    const feed = new LogFeed();
    const one = recorder();
    const inbox = recorder();
    feed.subscribe({ conversationId: "c1" }, one.listener);
    feed.subscribe({ accountId: "a2" }, inbox.listener);
    feed.advanced(undefined);
    expect([one.seen, inbox.seen]).toEqual([["changed"], ["changed"]]);
  });

  test("unsubscribing stops delivery; closing ends every subscription and refuses new ones", async () => {
    const feed = new LogFeed();
    const a = recorder();
    const b = recorder();
    const stop = feed.subscribe({ conversationId: "c1" }, a.listener);
    feed.subscribe({ conversationId: "c1" }, b.listener);
    stop();
    feed.advanced([at("a1", "c1")]);
    expect(a.seen).toEqual([]);
    expect(b.seen).toEqual(["changed"]);
    expect(feed.listeners).toBe(1);
    feed.close();
    expect(b.closed()).toBe(1);
    expect(feed.listeners).toBe(0);
    const late = recorder();
    feed.subscribe({ conversationId: "c1" }, late.listener);
    await new Promise((r) => setTimeout(r, 0));
    expect(late.closed()).toBe(1);
  });
});
