import { describe, expect, it } from "vitest";
import type { SavedReplyRecord } from "../../../src/domain/account/saved-replies.js";
import type { NoteRecord } from "../../../src/domain/conversation/repository.js";
import { AI_AGENT } from "../../../src/domain/conversation/rules.js";
import { newId } from "../../../src/domain/ids.js";
import { account, contactQuery, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

const note = (accountId: string, conversationId: string, content: string, createdAt: number): NoteRecord => ({
  noteId: newId(),
  accountId,
  conversationId,
  authorEmail: "kim@shop.example",
  content,
  createdAt,
});

const reply = (
  accountId: string,
  shortcut: string,
  content = `text of ${shortcut}`,
  ownerId = "",
): SavedReplyRecord => ({
  savedReplyId: newId(),
  accountId,
  ownerId,
  shortcut,
  content,
  createdAt: 5,
  updatedAt: 5,
});

/** The team's features in storage: internal notes, saved replies, and the contact list's views. */
export function teamCases(h: () => Harness) {
  describe("internal notes", () => {
    it("lists a conversation's notes oldest first, only its own, at most the limit", async () => {
      const { store } = h();
      const a = await account(store);
      const one = newId();
      const two = newId();
      await message(store, a, one, { userId: "u1", at: 10, start: true });
      await message(store, a, two, { userId: "u2", at: 10, start: true });
      await store.notes.add(note(a.accountId, one, "second", 30));
      await store.notes.add(note(a.accountId, one, "first", 20));
      await store.notes.add(note(a.accountId, two, "elsewhere", 25));
      expect((await store.notes.forConversation(one, 10)).map((n) => n.content)).toEqual(["first", "second"]);
      expect(await store.notes.forConversation(one, 1)).toHaveLength(1);
      const [n] = await store.notes.forConversation(two, 10);
      expect(n).toMatchObject({ accountId: a.accountId, conversationId: two, authorEmail: "kim@shop.example" });
      expect(n!.createdAt).toBe(25);
    });

    it("go with their conversation when its contact is erased or it expires", async () => {
      const { store } = h();
      const a = await account(store);
      const erased = newId();
      const expired = newId();
      const kept = newId();
      await message(store, a, erased, { userId: "gone", at: 1000, start: true });
      await message(store, a, expired, { userId: "old", at: 10, start: true });
      await message(store, a, newId(), { userId: "old", at: 1000, start: true });
      await message(store, a, kept, { userId: "stays", at: 1000, start: true });
      for (const id of [erased, expired, kept]) await store.notes.add(note(a.accountId, id, `about ${id}`, 1001));
      const contact = (await store.privacy.contact(a.accountId, { userId: "gone" }))!;
      await store.privacy.erase(contact, Date.now());
      expect(await store.privacy.expireConversations(a.chatbotId, 500, 10)).toEqual([expired]);
      expect(await store.notes.forConversation(erased, 10)).toEqual([]);
      expect(await store.notes.forConversation(expired, 10)).toEqual([]);
      expect(await store.notes.forConversation(kept, 10)).toHaveLength(1);
    });
  });

  describe("note mentions", () => {
    it("lists a person's mentions newest first with the note's text, marks them read, and erases them with the conversation", async () => {
      const store = h().store;
      const [a, conv] = [await account(store), newId()];
      await message(store, a, conv, { userId: "gone", at: 1000, start: true });
      const first = note(a.accountId, conv, "@Bea first", 1001);
      const second = note(a.accountId, conv, "@Bea @Cy second", 1002);
      const mention = (n: NoteRecord, memberId: string) => ({
        noteId: n.noteId,
        memberId,
        accountId: a.accountId,
        conversationId: conv,
        authorEmail: n.authorEmail,
        createdAt: n.createdAt,
        readAt: null,
      });
      for (const n of [first, second]) await store.notes.add(n);
      await store.mentions.add([mention(first, "bea")]);
      await store.mentions.add([mention(second, "bea"), mention(second, "cy")]);
      const bea = await store.mentions.forMember(a.accountId, "bea", 10);
      expect(bea.map((m) => m.content)).toEqual(["@Bea @Cy second", "@Bea first"]);
      expect(bea.every((m) => m.readAt === null)).toBe(true);
      expect(await store.mentions.forMember("another-account", "bea", 10)).toEqual([]);
      expect((await store.mentions.forNotes([second.noteId])).map((m) => m.memberId).sort()).toEqual(["bea", "cy"]);
      // Cy's read marks nothing of Bea's; another account's marks nothing at all.
      expect(await store.mentions.markRead("another-account", "bea", "all", 2000)).toBe(0);
      expect(await store.mentions.markRead(a.accountId, "bea", [first.noteId], 2000)).toBe(1);
      expect(await store.mentions.markRead(a.accountId, "bea", [first.noteId], 2001)).toBe(0);
      expect((await store.mentions.forMember(a.accountId, "bea", 10)).map((m) => m.readAt)).toEqual([null, 2000]);
      expect(await store.mentions.markRead(a.accountId, "bea", "all", 2002)).toBe(1);
      expect((await store.mentions.forMember(a.accountId, "cy", 10))[0]!.readAt).toBeNull();
      // The preference: on until turned off, per person.
      expect(await store.mentionAlerts.emailAlerts(a.accountId, "Bea@Shop.example")).toBe(true);
      await store.mentionAlerts.setEmailAlerts(a.accountId, "Bea@Shop.example", false, 5);
      expect(await store.mentionAlerts.emailAlerts(a.accountId, "bea@shop.example")).toBe(false);
      expect(await store.mentionAlerts.emailAlerts(a.accountId, "cy@shop.example")).toBe(true);
      const contact = (await store.privacy.contact(a.accountId, { userId: "gone" }))!;
      await store.privacy.erase(contact, Date.now());
      expect(await store.mentions.forMember(a.accountId, "cy", 10)).toEqual([]);
      expect(await store.mentions.forNotes([second.noteId])).toEqual([]);
    });
  });

  describe("saved replies", () => {
    it("adds, lists by shortcut, updates and removes, a shortcut unique in its account only", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const thanks = reply(a.accountId, "thanks");
      expect(await store.savedReplies.add(thanks)).toBe(true);
      expect(await store.savedReplies.add(reply(a.accountId, "hours"))).toBe(true);
      expect(await store.savedReplies.add(reply(a.accountId, "thanks", "again"))).toBe(false);
      expect(await store.savedReplies.add(reply(b.accountId, "thanks"))).toBe(true);
      expect((await store.savedReplies.list(a.accountId, "", 10)).map((r) => r.shortcut)).toEqual(["hours", "thanks"]);
      expect(await store.savedReplies.get(a.accountId, thanks.savedReplyId)).toEqual(thanks);
      expect(await store.savedReplies.get(b.accountId, thanks.savedReplyId)).toBeUndefined();

      const changed = { ...thanks, content: "Thank you!", updatedAt: 9 };
      expect(await store.savedReplies.update(changed)).toBe(true);
      expect(await store.savedReplies.get(a.accountId, thanks.savedReplyId)).toEqual(changed);
      // A shortcut another reply of the account holds: nothing changes.
      expect(await store.savedReplies.update({ ...changed, shortcut: "hours" })).toBe(false);
      expect(await store.savedReplies.get(a.accountId, thanks.savedReplyId)).toEqual(changed);
      // Another account cannot change or remove it.
      expect(await store.savedReplies.update({ ...changed, accountId: b.accountId, content: "x" })).toBe(false);
      expect(await store.savedReplies.remove(b.accountId, thanks.savedReplyId)).toBe(false);
      expect(await store.savedReplies.remove(a.accountId, thanks.savedReplyId)).toBe(true);
      expect(await store.savedReplies.remove(a.accountId, thanks.savedReplyId)).toBe(false);
      expect((await store.savedReplies.list(a.accountId, "", 10)).map((r) => r.shortcut)).toEqual(["hours"]);
    });

    it("keeps a person's own beside the shared ones: a shortcut unique per owner, listed to its owner only", async () => {
      const { store } = h();
      const a = await account(store);
      const shared = reply(a.accountId, "hours");
      const kims = reply(a.accountId, "hours", "Kim's hours", "kim");
      const lees = reply(a.accountId, "hours", "Lee's hours", "lee");
      for (const r of [shared, kims, lees]) expect(await store.savedReplies.add(r)).toBe(true);
      expect(await store.savedReplies.add(reply(a.accountId, "hours", "again", "kim"))).toBe(false);
      expect(await store.savedReplies.add(reply(a.accountId, "bye", "Bye", "kim"))).toBe(true);
      const listed = async (owner: string) =>
        (await store.savedReplies.list(a.accountId, owner, 10)).map((r) => `${r.ownerId}/${r.shortcut}`);
      expect(await listed("kim")).toEqual(["kim/bye", "/hours", "kim/hours"]);
      expect(await listed("lee")).toEqual(["/hours", "lee/hours"]);
      expect(await listed("")).toEqual(["/hours"]);
      expect(await store.savedReplies.get(a.accountId, kims.savedReplyId)).toEqual(kims);
      // A shortcut taken among the owner's own is refused; one taken by another owner (or the shared ones) is not.
      const bye = (await store.savedReplies.list(a.accountId, "kim", 10)).find((r) => r.shortcut === "bye")!;
      expect(await store.savedReplies.update({ ...bye, shortcut: "hours" })).toBe(false);
      expect(await store.savedReplies.update({ ...lees, shortcut: "later" })).toBe(true);
      expect(await listed("lee")).toEqual(["/hours", "lee/later"]);
    });
  });

  describe("contact list views", () => {
    it("lists the contacts whose latest conversation an assignee holds, in any case of the e-mail", async () => {
      const { store } = h();
      const a = await account(store);
      const held = newId();
      await message(store, a, held, { userId: "held", at: 10, start: true });
      await message(store, a, newId(), { userId: "free", at: 20, start: true });
      await store.conversations.assign(held, "Kim@Shop.example", "Kim");
      const list = async (assignee: string | null, search = "") =>
        (await store.contacts.list(contactQuery(a.accountId, { search, assignee }))).contacts.map((c) => c.userId);
      expect(await list(null)).toEqual(["free", "held"]);
      expect(await list("kim@shop.example")).toEqual(["held"]);
      expect(await list(AI_AGENT)).toEqual(["free"]);
      expect(await list("sam@shop.example")).toEqual([]);
      expect(await list(AI_AGENT, "fre")).toEqual(["free"]);
      expect(await list("kim@shop.example", "fre")).toEqual([]);
    });
  });
}
