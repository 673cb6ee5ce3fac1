import { describe, expect, it } from "vitest";
import { AI_AGENT } from "../../../src/domain/conversation/rules.js";
import { foldForSearch } from "../../../src/domain/conversation/search-fold.js";
import { newId } from "../../../src/domain/ids.js";
import { account, contactQuery, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** Contacts: the profile merge, the list's filters and order, the search definition, ownership. */
export function contactCases(h: () => Harness) {
  describe("contacts", () => {
    it("upsert creates once per (account, user) and an empty field keeps the stored value", async () => {
      const { store } = h();
      const a = await account(store);
      const id = await store.contacts.upsert(
        a.accountId,
        "u1",
        { contactName: "Ann Lee", email: "ann@x.example", phoneNumber: "" },
        1,
      );
      const again = await store.contacts.upsert(
        a.accountId,
        "u1",
        { contactName: "", email: "", phoneNumber: "+1 555" },
        2,
      );
      expect(again).toBe(id);
      await message(store, a, newId(), { at: 10, start: true, userId: "u1" });
      const [c] = (await store.contacts.list(contactQuery(a.accountId))).contacts;
      expect(c).toMatchObject({
        contactId: id,
        userId: "u1",
        contactName: "Ann Lee",
        email: "ann@x.example",
        phoneNumber: "+1 555",
      });
    });

    it("the list version moves with every change of a list: events, profile changes, retention; and only then", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const versions = new Set<string>();
      /** The version now, which must be new (changed) or the last one seen (unchanged). */
      let last = await store.contacts.listVersion(a.accountId);
      versions.add(last);
      const expectVersion = async (changed: boolean) => {
        const v = await store.contacts.listVersion(a.accountId);
        if (changed) expect(versions.has(v), `${v} after ${[...versions]}`).toBe(false);
        else expect(v).toBe(last);
        versions.add(v);
        last = v;
      };
      const profile = { contactName: "Ann Lee", email: "", phoneNumber: "" };
      await store.contacts.upsert(a.accountId, "u1", profile, 1);
      await message(store, a, newId(), { at: 10, start: true, userId: "u1" });
      last = await store.contacts.listVersion(a.accountId);
      versions.add(last);
      // The same profile again, an empty one, another account's change: nothing of a's lists changed.
      await store.contacts.upsert(a.accountId, "u1", profile, 2);
      await store.contacts.upsert(a.accountId, "u1", undefined, 3);
      await store.contacts.upsert(b.accountId, "u1", { ...profile, contactName: "Bo" }, 4);
      await store.events.append([
        {
          event: {
            eventId: newId(),
            accountId: b.accountId,
            type: "message.created",
            orderKey: "c",
            data: { conversationId: "c" },
            createdAt: 5,
          },
          deliveries: [],
        },
      ]);
      await expectVersion(false);
      for (const change of [
        { contactName: "Ann Smith", email: "", phoneNumber: "" },
        { contactName: "", email: "ann@x.example", phoneNumber: "" },
        { contactName: "", email: "", phoneNumber: "+1 555" },
      ]) {
        await store.contacts.upsert(a.accountId, "u1", change, 6);
        await expectVersion(true);
      }
      // Every change that records an event moves the account's event counter.
      await store.events.append([
        {
          event: {
            eventId: newId(),
            accountId: a.accountId,
            type: "conversation.read",
            orderKey: "c",
            data: { conversationId: "c" },
            createdAt: 7,
          },
          deliveries: [],
        },
      ]);
      await expectVersion(true);
      // A chatbot's new name (the list shows it) records no event; the same name again, or another account's, is no change.
      const bot = (await store.chatbots.byId(a.chatbotId))!;
      await store.chatbots.update({ ...bot, name: "Shop" });
      await expectVersion(true);
      await store.chatbots.update({ ...bot, name: "Shop", active: false });
      await store.chatbots.update({ ...(await store.chatbots.byId(b.chatbotId))!, name: "Other" });
      await expectVersion(false);
      // Retention records no event.
      expect(await store.privacy.expireConversations(a.chatbotId, 1000, 10)).toHaveLength(1);
      await expectVersion(true);
      expect(await store.privacy.expireConversations(a.chatbotId, 1000, 10)).toHaveLength(0);
      await expectVersion(false);
    });

    it("ensure, in a unit of work with the unit's other writes, creates the contact once and merges a profile like upsert", async () => {
      const { store } = h();
      const a = await account(store);
      // No profile: created once (a second ensure changes nothing); the unit's commit makes it visible.
      await store.transaction(
        async (tx) => {
          await tx.contacts.ensure(a.accountId, "u1", undefined, 1);
          await tx.contacts.ensure(a.accountId, "u1", { contactName: "", email: "", phoneNumber: "" }, 2);
        },
        { rowLocks: true },
      );
      const id = await store.contacts.upsert(a.accountId, "u1", undefined, 3);
      expect(await store.contacts.belongsTo(a.accountId, id)).toBe(true);
      // A profile given is merged (an empty field keeps the stored value), and the search finds the new name.
      await store.transaction((tx) =>
        tx.contacts.ensure(a.accountId, "u1", { contactName: "Émile Zola", email: "", phoneNumber: "+1 555" }, 4),
      );
      await store.contacts.ensure(a.accountId, "u1", { contactName: "", email: "emile@x.example", phoneNumber: "" }, 5);
      await message(store, a, newId(), { at: 10, start: true, userId: "u1" });
      const { contacts } = await store.contacts.list(contactQuery(a.accountId, { search: foldForSearch("emile") }));
      expect(contacts).toEqual([
        expect.objectContaining({
          contactId: id,
          contactName: "Émile Zola",
          email: "emile@x.example",
          phoneNumber: "+1 555",
        }),
      ]);
      // A unit that rolls back leaves no contact behind.
      await expect(
        store.transaction(async (tx) => {
          await tx.contacts.ensure(a.accountId, "gone", undefined, 6);
          throw new Error("undo");
        }),
      ).rejects.toThrow("undo");
      const gone = await store.contacts.upsert(a.accountId, "gone", undefined, 7);
      expect(gone).not.toBe(id);
      expect((await store.contacts.list(contactQuery(a.accountId))).contacts.map((c) => c.userId)).toEqual(["u1"]);
    });

    it("a contact belongs to its account only", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const id = await store.contacts.upsert(a.accountId, "u1", undefined, 1);
      expect(await store.contacts.belongsTo(a.accountId, id)).toBe(true);
      expect(await store.contacts.belongsTo(b.accountId, id)).toBe(false);
      expect(await store.contacts.belongsTo(a.accountId, newId())).toBe(false);
    });

    it("lists contacts with messages newest first, with the latest conversation's stored state; filters unread and live", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const c1 = newId();
      const c2 = newId();
      const c3 = newId();
      await message(store, a, c1, { at: 100, start: true, userId: "old" });
      await message(store, a, c2, { at: 200, start: true, userId: "read" });
      await store.conversations.markRead(c2);
      await message(store, a, c3, { at: 300, start: true, userId: "closed" });
      await store.conversations.setStatus(c3, "closed", 301);
      await message(store, b, newId(), { at: 400, start: true, userId: "elsewhere" });
      // A contact without any message is not listed.
      await store.contacts.upsert(a.accountId, "silent", undefined, 500);

      const all = await store.contacts.list(contactQuery(a.accountId));
      expect(all.contacts.map((c) => c.userId)).toEqual(["closed", "read", "old"]);
      expect(all.contacts[0]).toMatchObject({
        latestStatus: "closed",
        latestConversationId: c3,
        latestMessageAt: 300,
        channels: ["web"],
      });
      expect(all.contacts[2]).toMatchObject({
        latestStatus: "live",
        latestActivityAt: 100,
        unreadCount: 1,
        assignedTo: "ai_agent",
      });
      expect(
        (await store.contacts.list(contactQuery(a.accountId, { filter: "unread" }))).contacts.map((c) => c.userId),
      ).toEqual(["closed", "old"]);
      expect(
        (await store.contacts.list(contactQuery(a.accountId, { filter: "live" }))).contacts.map((c) => c.userId),
      ).toEqual(["read", "old"]);
      // Idle: live conversations with no message since liveSince are not live.
      expect(
        (await store.contacts.list(contactQuery(a.accountId, { filter: "live", liveSince: 150 }))).contacts.map(
          (c) => c.userId,
        ),
      ).toEqual(["read"]);
      const p = await store.contacts.list(contactQuery(a.accountId, { limit: 2, offset: 1 }));
      expect(p.contacts.map((c) => c.userId)).toEqual(["read", "old"]);
      expect(p.hasMore).toBe(false);
      expect((await store.contacts.list(contactQuery(a.accountId, { limit: 2 }))).hasMore).toBe(true);
    });

    it("shows the latest conversation's status, assignee and activity as they change; an older one's changes do not show", async () => {
      const { store } = h();
      const a = await account(store);
      const older = newId();
      const latest = newId();
      await message(store, a, older, { at: 100, start: true, userId: "u" });
      await message(store, a, latest, { at: 200, start: true, userId: "u" });
      const shown = async (search = "") => {
        const [c, ...rest] = (await store.contacts.list(contactQuery(a.accountId, { search }))).contacts;
        expect(rest).toEqual([]);
        return {
          id: c!.latestConversationId,
          status: c!.latestStatus,
          assignedTo: c!.assignedTo,
          activity: c!.latestActivityAt,
        };
      };
      expect(await shown()).toEqual({ id: latest, status: "live", assignedTo: AI_AGENT, activity: 200 });

      await store.conversations.assign(latest, "ann@shop.example", "Ann");
      expect(await shown()).toMatchObject({ status: "live", assignedTo: "ann@shop.example" });
      // The search reads the same row.
      expect(await shown("u")).toMatchObject({ status: "live", assignedTo: "ann@shop.example" });
      await store.conversations.setStatus(latest, "closed", 300);
      // Closing keeps the activity: the last message is still the one at 200.
      expect(await shown()).toEqual({ id: latest, status: "closed", assignedTo: "ann@shop.example", activity: 200 });
      await store.conversations.assign(latest, AI_AGENT, "");
      expect(await shown()).toMatchObject({ status: "closed", assignedTo: AI_AGENT });
      await store.conversations.setStatus(latest, "live", 310);
      expect(await shown()).toEqual({ id: latest, status: "live", assignedTo: AI_AGENT, activity: 200 });
      await store.conversations.assign(latest, "ann@shop.example", "Ann");
      await store.conversations.setStatus(latest, "closed", 320);

      // Changes to the older conversation are its own: the contact still shows the latest one.
      await store.conversations.assign(older, "bob@shop.example", "Bob");
      await store.conversations.setStatus(older, "closed", 330);
      await store.conversations.setStatus(older, "live", 340);
      await store.conversations.setStatus(older, "closed", 350);
      expect(await store.conversations.byId(older)).toMatchObject({ status: "closed", assignedTo: "bob@shop.example" });
      expect(await shown()).toEqual({ id: latest, status: "closed", assignedTo: "ann@shop.example", activity: 200 });
      expect(await shown("u")).toEqual({ id: latest, status: "closed", assignedTo: "ann@shop.example", activity: 200 });

      // The customer writes to the closed latest conversation: reopened, its new message is the activity.
      await message(store, a, latest, { at: 400 });
      expect(await shown()).toEqual({ id: latest, status: "live", assignedTo: "ann@shop.example", activity: 400 });

      // A message to the older conversation makes it the latest, with its own state (an operator's message does
      // not reopen it).
      await message(store, a, older, { at: 500, role: "operator" });
      expect(await shown()).toEqual({ id: older, status: "closed", assignedTo: "bob@shop.example", activity: 500 });
      // Now the other one is the older: its changes no longer show.
      await store.conversations.assign(latest, AI_AGENT, "");
      await store.conversations.setStatus(latest, "closed", 510);
      expect(await shown()).toEqual({ id: older, status: "closed", assignedTo: "bob@shop.example", activity: 500 });

      // A new conversation takes over.
      const newest = newId();
      await message(store, a, newest, { at: 600, start: true, userId: "u" });
      expect(await shown()).toEqual({ id: newest, status: "live", assignedTo: AI_AGENT, activity: 600 });
      expect(
        (await store.contacts.list(contactQuery(a.accountId, { filter: "live" }))).contacts.map((c) => c.latestStatus),
      ).toEqual(["live"]);
      await store.conversations.setStatus(older, "live", 610);
      await store.conversations.assign(older, "ann@shop.example", "Ann");
      expect(await shown()).toEqual({ id: newest, status: "live", assignedTo: AI_AGENT, activity: 600 });
    });

    it("search is a literal substring of the folded user id, name, e-mail or phone, of the account's contacts only", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const people = [
        ["u-1", "Zoë Müller", "zoe@shop.example", "+49 30 1234"],
        ["u-2", "Bob 100% Real", "bob_r@shop.example", ""],
        ["u-3", "Åsa Öberg", "asa@other.example", "+46 8 555"],
      ] as const;
      let at = 10;
      for (const [userId, contactName, email, phoneNumber] of people) {
        await store.contacts.upsert(a.accountId, userId, { contactName, email, phoneNumber }, at);
        await message(store, a, newId(), { at: at++, start: true, userId });
      }
      await store.contacts.upsert(b.accountId, "u-9", { contactName: "Zoe Other", email: "", phoneNumber: "" }, 1);
      await message(store, b, newId(), { at: 99, start: true, userId: "u-9" });
      const find = async (term: string) =>
        (await store.contacts.list(contactQuery(a.accountId, { search: foldForSearch(term) }))).contacts
          .map((c) => c.userId)
          .sort();
      expect(await find("zoe")).toEqual(["u-1"]);
      expect(await find("MULLER")).toEqual(["u-1"]);
      expect(await find("oberg")).toEqual(["u-3"]);
      expect(await find("shop.example")).toEqual(["u-1", "u-2"]);
      expect(await find("100%")).toEqual(["u-2"]);
      expect(await find("b_r")).toEqual(["u-2"]);
      expect(await find("%")).toEqual(["u-2"]);
      expect(await find("555")).toEqual(["u-3"]);
      expect(await find("u-")).toEqual(["u-1", "u-2", "u-3"]);
      expect(await find("nobody")).toEqual([]);
    });

    it("markUnread makes the latest customer message unread again, once, in the conversation and its contact", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true, userId: "again" });
      await message(store, a, id, { at: 2, role: "assistant" });
      await message(store, a, id, { at: 3 });
      await message(store, a, id, { at: 4, role: "operator" });
      const unread = async () => ({
        conversation: (await store.conversations.byId(id))?.unreadCount,
        contact: (await store.contacts.list(contactQuery(a.accountId))).contacts[0]?.unreadCount,
        listed: (await store.contacts.list(contactQuery(a.accountId, { filter: "unread" }))).contacts.length,
      });
      expect(await unread()).toEqual({ conversation: 2, contact: 2, listed: 1 });
      // Unread already: nothing changes.
      await store.conversations.markUnread(id);
      expect(await unread()).toEqual({ conversation: 2, contact: 2, listed: 1 });
      await store.conversations.markRead(id);
      expect(await unread()).toEqual({ conversation: 0, contact: 0, listed: 0 });
      await store.conversations.markUnread(id);
      expect(await unread()).toEqual({ conversation: 1, contact: 1, listed: 1 });
      await store.conversations.markUnread(id);
      expect(await unread()).toEqual({ conversation: 1, contact: 1, listed: 1 });
      // The marker sits just before the latest customer message: the next one counts on top of it.
      await message(store, a, id, { at: 5 });
      expect(await unread()).toEqual({ conversation: 2, contact: 2, listed: 1 });
      await store.conversations.markRead(id);
      expect(await unread()).toEqual({ conversation: 0, contact: 0, listed: 0 });
    });
  });
}
