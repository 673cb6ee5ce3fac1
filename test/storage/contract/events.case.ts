import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { NewEvent } from "../../../src/domain/log/repository.js";
import { account, endpoint } from "./fixtures.js";
import type { Harness } from "./harness.js";

function event(accountId: string, orderKey: string, at: number): NewEvent {
  return {
    eventId: newId(),
    accountId,
    type: "message.created",
    orderKey,
    data: { conversationId: orderKey, reason: `at ${at}` },
    createdAt: at,
  };
}

/** The event log and webhook deliveries: places, atomicity with the change, claims, attempts, retention. */
export function eventCases(h: () => Harness) {
  describe("events and webhook deliveries", () => {
    it("gives each account's events gap-free places in commit order, and lists them after a place, by type", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const first = await store.events.append([{ event: event(a.accountId, "c1", 1), deliveries: [] }]);
      await store.events.append([{ event: event(b.accountId, "c9", 2), deliveries: [] }]);
      const more = await store.events.append([
        { event: event(a.accountId, "c1", 3), deliveries: [] },
        { event: { ...event(a.accountId, "", 4), type: "session.revoked" }, deliveries: [] },
      ]);
      expect([...first, ...more].map((e) => e.seq)).toEqual([1, 2, 3]);
      expect((await store.events.list(a.accountId, 0, 10, [])).map((e) => e.seq)).toEqual([1, 2, 3]);
      expect((await store.events.list(a.accountId, 1, 10, [])).map((e) => e.seq)).toEqual([2, 3]);
      expect((await store.events.list(a.accountId, 0, 10, ["session.revoked"])).map((e) => e.seq)).toEqual([3]);
      expect((await store.events.list(b.accountId, 0, 10, [])).map((e) => e.data)).toEqual([
        { conversationId: "c9", reason: "at 2" },
      ]);
      // Where a watcher starts: the last place of its own account only.
      expect(await store.events.lastSeq(a.accountId)).toBe(3);
      expect(await store.events.lastSeq(b.accountId)).toBe(1);
      expect(await store.events.lastSeq("no-such-account")).toBe(0);
    });

    it("concurrent writers of one account get distinct consecutive places", async () => {
      const { store } = h();
      const a = await account(store);
      // Eight at once: the contract's PostgreSQL has four connections and a short lock timeout.
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          store.transaction((tx) => tx.events.add([{ event: event(a.accountId, `c${i % 3}`, i), deliveries: [] }]), {
            rowLocks: true,
          }),
        ),
      );
      expect((await store.events.list(a.accountId, 0, 100, [])).map((e) => e.seq)).toEqual(
        Array.from({ length: 8 }, (_, i) => i + 1),
      );
    });

    it("an event written in a unit of work that fails is not recorded, nor its deliveries", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      await expect(
        store.transaction(
          async (tx) => {
            await tx.events.add([
              { event: event(a.accountId, "c1", 1), deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] },
            ]);
            throw new Error("the change failed");
          },
          { rowLocks: true },
        ),
      ).rejects.toThrow("the change failed");
      expect(await store.events.list(a.accountId, 0, 10, [])).toEqual([]);
      expect(await store.webhooks.deliveries(ep.endpointId, 10, undefined)).toEqual([]);
      // The place is not spent either.
      const [e] = await store.events.append([{ event: event(a.accountId, "c1", 2), deliveries: [] }]);
      expect(e!.seq).toBe(1);
    });

    it("add records like append without answering: readable once its unit committed, gone with a failed unit", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      const delivery = () => [{ deliveryId: newId(), endpointId: ep.endpointId }];
      // Concurrent units of one account still take distinct consecutive places.
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.transaction((tx) => tx.events.add([{ event: event(a.accountId, `c${i % 2}`, i), deliveries: [] }]), {
            rowLocks: true,
          }),
        ),
      );
      await store.transaction(
        async (tx) => {
          await tx.events.add([{ event: event(a.accountId, "c1", 7), deliveries: delivery() }]);
        },
        { rowLocks: true },
      );
      // Read your writes: when the unit returns, its events have their places.
      expect((await store.events.list(a.accountId, 6, 10, [])).map((e) => e.seq)).toEqual([7]);
      expect(await store.events.lastSeq(a.accountId)).toBe(7);
      await expect(
        store.transaction(
          async (tx) => {
            await tx.events.add([{ event: event(a.accountId, "c1", 8), deliveries: delivery() }]);
            throw new Error("the change failed");
          },
          { rowLocks: true },
        ),
      ).rejects.toThrow("the change failed");
      expect((await store.events.list(a.accountId, 0, 100, [])).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await store.webhooks.deliveries(ep.endpointId, 10, undefined)).toHaveLength(1);
    });

    it("claims only the oldest pending delivery of each endpoint and order key, once, until it is attempted", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      const d = (key: string, at: number) => ({
        event: event(a.accountId, key, at),
        deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }],
      });
      await store.events.append([d("c1", 10), d("c1", 11), d("c2", 12)]);
      const claimed = await store.webhooks.claim(100, 1000, 10, 10);
      expect(claimed.map((c) => c.event.seq).sort()).toEqual([1, 3]);
      expect(claimed[0]!.url).toBe(ep.url);
      expect(claimed[0]!.secretSealed).toBe("sealed");
      // Claimed: not claimed again (by this or another dispatcher) before the lease ends.
      expect(await store.webhooks.claim(100, 1000, 10, 10)).toEqual([]);
      const c1 = claimed.find((c) => c.event.seq === 1)!;
      await store.webhooks.attempted(c1.delivery.deliveryId, ep.endpointId, {
        at: 101,
        responseCode: 500,
        error: "HTTP 500",
        ok: false,
        nextAttemptAt: 200,
      });
      expect((await store.webhooks.endpoint(ep.endpointId))!.failingSince).toBe(101);
      // Failed and due later: the next one of c1 still waits behind it.
      expect(await store.webhooks.claim(150, 1000, 10, 10)).toEqual([]);
      const again = await store.webhooks.claim(200, 1000, 10, 10);
      // Claiming counts the attempt: from then it may reach the endpoint, even if its holder dies.
      expect(again.map((c) => [c.event.seq, c.delivery.attempts])).toEqual([[1, 2]]);
      await store.webhooks.attempted(c1.delivery.deliveryId, ep.endpointId, {
        at: 201,
        responseCode: 204,
        error: "",
        ok: true,
        nextAttemptAt: null,
      });
      expect((await store.webhooks.endpoint(ep.endpointId))!.failingSince).toBeNull();
      expect((await store.webhooks.claim(202, 1000, 10, 10)).map((c) => c.event.seq)).toEqual([2]);
      const listed = await store.webhooks.deliveries(ep.endpointId, 10, "delivered");
      expect(listed.map((x) => [x.eventSeq, x.attempts, x.lastResponseCode, x.status])).toEqual([
        [1, 2, 204, "delivered"],
      ]);
      // A renewed claim holds past its first lease; a lapsed one (a dispatcher that died mid-attempt) is claimable.
      const c3 = claimed.find((c) => c.event.seq === 3)!;
      await store.webhooks.renew([c3.delivery.deliveryId], 2500);
      expect((await store.webhooks.claim(2000, 3000, 10, 10)).map((c) => c.event.seq)).toEqual([2]);
      const lapsed = await store.webhooks.claim(2600, 3000, 10, 10);
      expect(lapsed.map((c) => [c.event.seq, c.delivery.attempts])).toEqual([[3, 2]]);
    });

    it("two dispatchers claiming at once never get the same delivery", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      await store.events.append(
        Array.from({ length: 30 }, (_, i) => ({
          event: event(a.accountId, `c${i}`, i),
          deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }],
        })),
      );
      const batches = await Promise.all(Array.from({ length: 4 }, () => store.webhooks.claim(100, 1000, 10, 10)));
      const ids = batches.flat().map((c) => c.delivery.deliveryId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(30);
    });

    it("an endpoint holds at most its share of a claimer's deliveries; another endpoint's is claimed", async () => {
      const { store } = h();
      const a = await account(store);
      const stuck = await endpoint(store, a.accountId);
      const b = await account(store);
      const other = await endpoint(store, b.accountId);
      // Eight conversations of the stuck endpoint, all due before the other endpoint's one.
      await store.events.append(
        Array.from({ length: 8 }, (_, i) => ({
          event: event(a.accountId, `c${i}`, i),
          deliveries: [{ deliveryId: newId(), endpointId: stuck.endpointId }],
        })),
      );
      await store.events.append([
        { event: event(b.accountId, "b1", 9), deliveries: [{ deliveryId: newId(), endpointId: other.endpointId }] },
      ]);
      const first = await store.webhooks.claim(100, 1000, 4, 2);
      expect(first.map((c) => c.delivery.endpointId)).toEqual([stuck.endpointId, stuck.endpointId]);
      // Its two attempts still run: the stuck endpoint is at its share, so the other endpoint's delivery is claimed.
      const running = first.map((c) => c.delivery.deliveryId);
      const second = await store.webhooks.claim(100, 1000, 4, 2, running);
      expect(second.map((c) => c.delivery.endpointId)).toEqual([other.endpointId]);
      // One attempt done (released and rescheduled): the stuck endpoint gets one slot back, not more.
      await store.webhooks.attempted(running[0]!, stuck.endpointId, {
        at: 101,
        responseCode: 0,
        error: "timed out",
        ok: false,
        nextAttemptAt: 5000,
      });
      const third = await store.webhooks.claim(100, 1000, 4, 2, [running[1]!, second[0]!.delivery.deliveryId]);
      expect(third.map((c) => c.delivery.endpointId)).toEqual([stuck.endpointId]);
      // Another claimer (instance) has its own share.
      expect(await store.webhooks.claim(100, 1000, 10, 2)).toHaveLength(2);
    });

    it("an update writes a rotated secret: the next claim carries the new sealed secret", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      await store.events.append([
        { event: event(a.accountId, "c1", 1), deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] },
      ]);
      await store.webhooks.updateEndpoint({ ...ep, secretSealed: "sealed-after-rotation" });
      expect((await store.webhooks.endpoint(ep.endpointId))!.secretSealed).toBe("sealed-after-rotation");
      const [c] = await store.webhooks.claim(100, 1000, 10, 10);
      expect(c!.secretSealed).toBe("sealed-after-rotation");
    });

    it("a disabled endpoint's deliveries wait; re-enabled, they go out; resend makes a delivered one pending", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      const [e] = await store.events.append([
        { event: event(a.accountId, "c1", 1), deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] },
      ]);
      await store.webhooks.updateEndpoint({ ...ep, enabled: false, disabledReason: "off" });
      expect(await store.webhooks.claim(100, 1000, 10, 10)).toEqual([]);
      await store.webhooks.updateEndpoint({ ...ep, enabled: true });
      const [c] = await store.webhooks.claim(100, 1000, 10, 10);
      expect(c!.event.eventId).toBe(e!.eventId);
      await store.webhooks.attempted(c!.delivery.deliveryId, ep.endpointId, {
        at: 101,
        responseCode: 200,
        error: "",
        ok: true,
        nextAttemptAt: null,
      });
      await store.webhooks.resend(c!.delivery.deliveryId, 300);
      expect((await store.webhooks.delivery(c!.delivery.deliveryId))!.status).toBe("pending");
      expect((await store.webhooks.claim(300, 1000, 10, 10)).map((x) => x.delivery.deliveryId)).toEqual([
        c!.delivery.deliveryId,
      ]);
    });

    it("prunes events older than the retention, not those with a pending delivery; deleting an endpoint drops its deliveries", async () => {
      const { store } = h();
      const a = await account(store);
      const ep = await endpoint(store, a.accountId);
      await store.events.append([
        { event: event(a.accountId, "c1", 10), deliveries: [] },
        { event: event(a.accountId, "c2", 20), deliveries: [{ deliveryId: newId(), endpointId: ep.endpointId }] },
        { event: event(a.accountId, "c3", 500), deliveries: [] },
      ]);
      expect(await store.events.prune(100, 100)).toBe(1);
      expect((await store.events.list(a.accountId, 0, 10, [])).map((e) => e.seq)).toEqual([2, 3]);
      await store.webhooks.deleteEndpoint(ep.endpointId);
      expect(await store.webhooks.endpoint(ep.endpointId)).toBeUndefined();
      expect(await store.events.prune(100, 100)).toBe(1);
      expect((await store.events.list(a.accountId, 0, 10, [])).map((e) => e.seq)).toEqual([3]);
    });
  });
}
