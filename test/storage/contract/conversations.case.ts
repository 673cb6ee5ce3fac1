import { describe, expect, it } from "vitest";
import { AI_AGENT } from "../../../src/domain/conversation/rules.js";
import { newId } from "../../../src/domain/ids.js";
import { account, contactQuery, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** Conversations and messages: ordering, paging, the counters the list reads, and what the domain decides. */
export function conversationCases(h: () => Harness) {
  describe("conversations", () => {
    it("a first message starts the conversation as the domain says (live, AI agent) and makes its contact", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      const m = await message(store, a, id, { at: 1000, start: true, userId: "cust-1" });
      expect(m).toMatchObject({ conversationId: id, messageOrder: 1, role: "user", conversationCreatedAt: 1000 });
      const c = await store.conversations.byId(id);
      expect(c).toMatchObject({
        accountId: a.accountId,
        chatbotId: a.chatbotId,
        userId: "cust-1",
        channel: "web",
        status: "live",
        assignedTo: AI_AGENT,
        operatorName: "",
        createdAt: 1000,
        lastMessageAt: 1000,
        messageCount: 1,
        unreadCount: 1,
      });
      expect(await store.contacts.belongsTo(a.accountId, c!.contactId)).toBe(true);
      expect(await store.conversations.byId(newId())).toBeUndefined();
    });

    it("appending to a conversation that does not exist fails and writes nothing", async () => {
      const { store } = h();
      const a = await account(store);
      await expect(message(store, a, newId(), { at: 1 })).rejects.toThrow();
      expect((await store.contacts.list(contactQuery(a.accountId))).contacts).toEqual([]);
    });

    it("message_order is gap-free from 1 under many concurrent writers", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true });
      const roles = ["user", "assistant", "operator"] as const;
      const written = await Promise.all(
        Array.from({ length: 60 }, (_, i) => message(store, a, id, { at: 2 + i, role: roles[i % 3]! })),
      );
      const orders = written.map((m) => m.messageOrder).sort((x, y) => x - y);
      expect(orders).toEqual(Array.from({ length: 60 }, (_, i) => i + 2));
      const all = await store.conversations.messages({ conversationId: id, createdAt: 1 }, 100, 0);
      expect(all.messages.map((m) => m.messageOrder)).toEqual(Array.from({ length: 61 }, (_, i) => i + 1));
      expect(all.hasMore).toBe(false);
      expect((await store.conversations.byId(id))?.messageCount).toBe(61);
    });

    it("an operator reply keeps its author's name; other messages have none", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true });
      const reply = {
        messageId: newId(),
        role: "operator" as const,
        content: "A person here.",
        toolCalls: "",
        documents: [],
        createdAt: 2,
        authorName: "Bea Stone",
      };
      const written = await store.conversations.append(id, reply, { unread: false, reopens: false });
      expect(written.authorName).toBe("Bea Stone");
      const ref = { conversationId: id, createdAt: 1 };
      const read = (await store.conversations.messages(ref, 10, 0)).messages;
      expect(read.map((m) => m.authorName)).toEqual([undefined, "Bea Stone"]);
      expect((await store.conversations.recent(ref, 1)).map((m) => m.authorName)).toEqual(["Bea Stone"]);
    });

    it("previews name each conversation's chatbot as it is named now, beside its id and last message", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const [x, y, z] = [newId(), newId(), newId()];
      await message(store, a, x, { at: 1, start: true, content: "Where is my parcel?" });
      await message(store, b, y, { at: 2, start: true });
      const bot = (await store.chatbots.byId(a.chatbotId))!;
      await store.chatbots.update({ ...bot, name: "Shop – Ünïcode" });
      const p = await store.conversations.previews([x, y, z]);
      expect([...p.keys()].sort()).toEqual([x, y].sort());
      expect(p.get(x)).toMatchObject({
        chatbotId: a.chatbotId,
        chatbotName: "Shop – Ünïcode",
        role: "user",
        content: "Where is my parcel?",
      });
      expect(p.get(y)).toMatchObject({ chatbotId: b.chatbotId, chatbotName: "bot" });
    });

    it("pages messages by order after an offset, and recent() gives the latest oldest first", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 10, start: true, content: "m1" });
      for (let i = 2; i <= 7; i++)
        await message(store, a, id, { at: 10 * i, role: i % 2 ? "user" : "assistant", content: `m${i}` });
      const ref = { conversationId: id, createdAt: 10 };
      const p1 = await store.conversations.messages(ref, 3, 0);
      expect(p1.messages.map((m) => m.content)).toEqual(["m1", "m2", "m3"]);
      expect(p1.hasMore).toBe(true);
      const p3 = await store.conversations.messages(ref, 3, 6);
      expect(p3.messages.map((m) => m.content)).toEqual(["m7"]);
      expect(p3.hasMore).toBe(false);
      expect((await store.conversations.recent(ref, 3)).map((m) => m.content)).toEqual(["m5", "m6", "m7"]);
      expect(p1.messages[1]).toMatchObject({ role: "assistant", toolCalls: "", documents: [], createdAt: 20 });
    });

    it("messageCount is the latest message_order, moving with each append; undefined for no such conversation", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      expect(await store.conversations.messageCount(id)).toBeUndefined();
      await message(store, a, id, { at: 10, start: true });
      expect(await store.conversations.messageCount(id)).toBe(1);
      await message(store, a, id, { at: 20, role: "assistant" });
      await message(store, a, id, { at: 30 });
      expect(await store.conversations.messageCount(id)).toBe(3);
      const last = await store.conversations.messages({ conversationId: id, createdAt: 10 }, 1, 2);
      expect(last.messages[0]?.messageOrder).toBe(3);
    });

    it("counts only customer messages as unread until markRead; a customer message reopens a closed one", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true });
      await message(store, a, id, { at: 2, role: "assistant" });
      await message(store, a, id, { at: 3, role: "operator" });
      await message(store, a, id, { at: 4 });
      expect((await store.conversations.byId(id))?.unreadCount).toBe(2);
      await store.conversations.markRead(id);
      expect((await store.conversations.byId(id))?.unreadCount).toBe(0);
      await store.conversations.setStatus(id, "closed", 5);
      expect((await store.conversations.byId(id))?.status).toBe("closed");
      await message(store, a, id, { at: 6, role: "operator" });
      expect((await store.conversations.byId(id))?.status).toBe("closed");
      await message(store, a, id, { at: 7 });
      expect(await store.conversations.byId(id)).toMatchObject({ status: "live", unreadCount: 1, lastMessageAt: 7 });
    });

    it("assigns an operator by name and back to the AI agent", async () => {
      const { store } = h();
      const a = await account(store);
      const id = newId();
      await message(store, a, id, { at: 1, start: true });
      await store.conversations.assign(id, "ann@shop.example", "Ann");
      expect(await store.conversations.byId(id)).toMatchObject({ assignedTo: "ann@shop.example", operatorName: "Ann" });
      await store.conversations.assign(id, AI_AGENT, "");
      expect(await store.conversations.byId(id)).toMatchObject({ assignedTo: AI_AGENT, operatorName: "" });
    });

    it("lists a user's conversations with one chatbot and a contact's conversations, newest first, paged", async () => {
      const { store } = h();
      const a = await account(store);
      const other = await account(store);
      const ids: string[] = [];
      for (let i = 1; i <= 3; i++) {
        const id = newId();
        ids.push(id);
        await message(store, a, id, { at: 100 * i, start: true, userId: "cust" });
      }
      // The same user id at another account is another person.
      await message(store, other, newId(), { at: 1000, start: true, userId: "cust" });
      const mine = await store.conversations.forUser(a.accountId, a.chatbotId, "cust", 10);
      expect(mine.map((c) => c.conversationId)).toEqual([...ids].reverse());
      expect((await store.conversations.forUser(a.accountId, a.chatbotId, "cust", 2)).length).toBe(2);
      const contactId = mine[0]!.contactId;
      const p = await store.conversations.forContact(contactId, 2, 0);
      expect(p.conversations.map((c) => c.conversationId)).toEqual([ids[2], ids[1]]);
      expect(p.hasMore).toBe(true);
      const rest = await store.conversations.forContact(contactId, 2, 2);
      expect(rest.conversations.map((c) => c.conversationId)).toEqual([ids[0]]);
      expect(rest.hasMore).toBe(false);
    });
  });
}
