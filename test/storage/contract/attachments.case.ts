import { describe, expect, it } from "vitest";
import type { MessageAttachment } from "../../../src/domain/conversation/repository.js";
import { messageEffect, NEW_CONVERSATION } from "../../../src/domain/conversation/rules.js";
import { newId } from "../../../src/domain/ids.js";
import type { Store } from "../../../src/domain/store.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

let n = 0;

/** A customer's message carrying one file, stored as the attachments use case stores it (one unit of work). */
async function fileMessage(store: Store, a: { accountId: string; chatbotId: string }, userId: string, at: number) {
  const conversationId = newId();
  const bytes = new Uint8Array([0xff, 0xd8, 0xff, ++n, 0, 1, 2, 255]);
  const meta: MessageAttachment = {
    attachmentId: newId().replaceAll("-", ""),
    name: "parcel.jpg",
    contentType: "image/jpeg",
    size: bytes.length,
    width: 64,
    height: 48,
  };
  const m = await store.transaction(async (tx) => {
    const stored = await tx.conversations.append(
      conversationId,
      {
        messageId: newId(),
        role: "user",
        content: "",
        toolCalls: "",
        documents: [],
        createdAt: at,
        attachments: [meta],
      },
      messageEffect("user"),
      { conversationId, accountId: a.accountId, chatbotId: a.chatbotId, userId, channel: "web", ...NEW_CONVERSATION },
    );
    await tx.attachments.put({
      attachmentId: meta.attachmentId,
      name: meta.name,
      contentType: meta.contentType,
      bytes,
      messageId: stored.messageId,
      conversationId,
      accountId: a.accountId,
      createdAt: at,
    });
    return stored;
  });
  return { conversationId, meta, bytes, message: m };
}

const plain = (f: { bytes: Uint8Array } | undefined) => f && { ...f, bytes: [...f.bytes] };

/** The files sent with messages: read with their message, kept beside it, gone with it (erasure and retention). */
export function attachmentCases(h: () => Harness) {
  describe("attachments", () => {
    it("a message carries its files' descriptions on every read; the bytes are found by id, and only by it", async () => {
      const { store } = h();
      const a = await account(store);
      const f = await fileMessage(store, a, "alice", 10);
      expect(f.message.attachments).toEqual([f.meta]);
      const conv = (await store.conversations.byId(f.conversationId))!;
      expect((await store.conversations.messages(conv, 10, 0)).messages[0]!.attachments).toEqual([f.meta]);
      expect((await store.conversations.recent(conv, 5))[0]!.attachments).toEqual([f.meta]);
      // A message without files has none (not an empty list: nothing changes for the messages before this feature).
      const text = await store.conversations.append(
        f.conversationId,
        { messageId: newId(), role: "operator", content: "Thanks", toolCalls: "", documents: [], createdAt: 20 },
        messageEffect("operator"),
      );
      expect(text.attachments).toBeUndefined();
      expect((await store.conversations.messages(conv, 10, 0)).messages[1]!.attachments).toBeUndefined();

      expect(plain(await store.attachments.file(f.meta.attachmentId))).toEqual({
        attachmentId: f.meta.attachmentId,
        name: "parcel.jpg",
        contentType: "image/jpeg",
        bytes: [...f.bytes],
      });
      expect(await store.attachments.file("0".repeat(32))).toBeUndefined();
      const listed = await store.attachments.ofConversations([f.conversationId]);
      expect(listed.map((x) => ({ id: x.attachmentId, messageId: x.messageId }))).toEqual([
        { id: f.meta.attachmentId, messageId: f.message.messageId },
      ]);
      expect(await store.attachments.ofConversations([])).toEqual([]);
    });

    it("erasing the customer and expiring the conversation leave no file behind, and spare the others' files", async () => {
      const { store } = h();
      const a = await account(store);
      // Alice's and Bob's conversations are idle since before 500; Carol's is not.
      const files = [];
      for (const [user, at] of [
        ["alice", 10],
        ["bob", 20],
        ["carol", 5000],
      ] as const)
        files.push(await fileMessage(store, a, user, at));
      const [alice, bob, carol] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
      await store.privacy.erase((await store.privacy.contact(a.accountId, { userId: "alice" }))!, 30);
      expect(await store.attachments.file(alice.meta.attachmentId)).toBeUndefined();
      expect(await store.attachments.ofConversations([alice.conversationId])).toEqual([]);
      expect(await store.attachments.file(bob.meta.attachmentId)).toBeDefined();

      expect(await store.privacy.expireConversations(a.chatbotId, 500, 10)).toEqual([bob.conversationId]);
      expect(await store.attachments.file(bob.meta.attachmentId)).toBeUndefined();
      expect(plain(await store.attachments.file(carol.meta.attachmentId))?.bytes).toEqual([...carol.bytes]);
    });
  });
}
