import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { ConversationEvent } from "../../../src/domain/log/events.js";
import { account, endpoint, event } from "./fixtures.js";
import type { Harness } from "./harness.js";

/**
 * The one wake-up of watchers and dispatchers: the store announces each append to an event log after its commit,
 * never before it and never for a unit that rolled back (docs/live-updates.md).
 */
export function logAdvanceCases(h: () => Harness) {
  describe("announcements that an event log advanced", () => {
    it("a unit of work's appends are announced once, after it committed, naming account and conversations", async () => {
      const { store } = h();
      const a = await account(store);
      const heard: (readonly ConversationEvent[] | undefined)[] = [];
      const stop = await store.onLogAdvanced((c) => void heard.push(c));
      try {
        let heardInside = -1;
        await store.transaction(async (tx) => {
          await tx.events.add([{ event: event(a.accountId, "c1"), deliveries: [] }]);
          // A nested unit joins the outer one: its append is announced with the outer commit, not at its end.
          await store.transaction((inner) =>
            inner.events.add([
              { event: event(a.accountId, "c2"), deliveries: [] },
              { event: event(a.accountId, "c1"), deliveries: [] },
            ]),
          );
          heardInside = heard.length;
        });
        expect(heardInside).toBe(0);
        expect(heard).toEqual([
          [
            { accountId: a.accountId, conversationId: "c1" },
            { accountId: a.accountId, conversationId: "c2" },
          ],
        ]);
        // An append outside a unit is its own commit: announced as it returns.
        await store.events.append([{ event: event(a.accountId, ""), deliveries: [] }]);
        expect(heard.at(-1)).toEqual([{ accountId: a.accountId, conversationId: "" }]);
      } finally {
        stop();
      }
    });

    it("an announcement says whether the appends recorded any webhook delivery (a dispatcher wakes only for those)", async () => {
      const { store } = h();
      const a = await account(store);
      const { endpointId } = await endpoint(store, a.accountId);
      const heard: boolean[] = [];
      const stop = await store.onLogAdvanced((_c, deliveries) => void heard.push(deliveries));
      try {
        await store.transaction(async (tx) => {
          await tx.events.add([{ event: event(a.accountId, "c1"), deliveries: [] }]);
        });
        await store.transaction(async (tx) => {
          await tx.events.add([{ event: event(a.accountId, "c1"), deliveries: [] }]);
          await tx.events.add([{ event: event(a.accountId, "c2"), deliveries: [{ deliveryId: newId(), endpointId }] }]);
        });
        await store.events.append([{ event: event(a.accountId, ""), deliveries: [] }]);
        expect(heard).toEqual([false, true, false]);
      } finally {
        stop();
      }
    });

    it("a unit that rolled back announces nothing; after stop() nothing more is heard", async () => {
      const { store } = h();
      const a = await account(store);
      const heard: unknown[] = [];
      const stop = await store.onLogAdvanced((c) => void heard.push(c));
      await expect(
        store.transaction(async (tx) => {
          await tx.events.add([{ event: event(a.accountId, "c1"), deliveries: [] }]);
          throw new Error("undo");
        }),
      ).rejects.toThrow("undo");
      expect(heard).toEqual([]);
      expect(await store.events.lastSeq(a.accountId)).toBe(0);
      stop();
      await store.transaction((tx) => tx.events.add([{ event: event(a.accountId, "c1"), deliveries: [] }]));
      expect(heard).toEqual([]);
    });
  });
}
