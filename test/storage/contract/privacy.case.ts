import { describe, expect, it } from "vitest";
import type { AuditEventRecord } from "../../../src/domain/audit/repository.js";
import { newId } from "../../../src/domain/ids.js";
import type { Store } from "../../../src/domain/store.js";
import { account, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

function auditEvent(accountId: string, kind: AuditEventRecord["kind"], createdAt: number): AuditEventRecord {
  return {
    auditEventId: newId(),
    accountId,
    kind,
    actor: "kim@shop.example",
    target: newId(),
    details: { role: "admin" },
    address: "203.0.113.7",
    userAgent: "Mozilla/5.0",
    createdAt,
  };
}

/** A customer of the account with a conversation of `count` messages at `at`; answers its conversation id. */
async function conversation(store: Store, a: { accountId: string; chatbotId: string }, userId: string, at: number) {
  const id = newId();
  await message(store, a, id, { userId, at, start: true, content: `from ${userId} at ${at}` });
  await message(store, a, id, { role: "assistant", at: at + 1 });
  return id;
}

async function session(store: Store, a: { accountId: string; chatbotId: string }, userId: string) {
  await store.refreshTokens.insert({
    tokenHash: newId().replaceAll("-", ""),
    sessionId: newId(),
    accountId: a.accountId,
    chatbotId: a.chatbotId,
    userId,
    createdAt: 1,
    expiresAt: 100_000,
    revokedAt: null,
    lastUsedAt: 1,
    lastOrigin: "",
    userAgent: "",
  });
}

/** The audit log, and what erasure, export and retention need of storage. */
export function privacyCases(h: () => Harness) {
  describe("audit log", () => {
    it("lists an account's events newest first, by kind and time, from a keyset, and prunes old ones", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const e1 = auditEvent(a.accountId, "api_key.created", 10);
      const e2 = auditEvent(a.accountId, "member.invited", 20);
      const e3 = auditEvent(a.accountId, "api_key.revoked", 30);
      for (const e of [e1, e2, e3, auditEvent(b.accountId, "api_key.created", 25)]) await store.audit.insert(e);
      const q = { accountId: a.accountId, kinds: [], since: undefined, until: undefined, before: undefined, limit: 10 };
      expect(await store.audit.list(q)).toEqual([e3, e2, e1]);
      expect(await store.audit.list({ ...q, kinds: ["api_key.created", "api_key.revoked"] })).toEqual([e3, e1]);
      expect(await store.audit.list({ ...q, since: 20, until: 30 })).toEqual([e2]);
      expect(await store.audit.list({ ...q, before: { createdAt: 30, auditEventId: e3.auditEventId } })).toEqual([
        e2,
        e1,
      ]);
      expect(await store.audit.list({ ...q, limit: 1 })).toEqual([e3]);
      expect(await store.audit.prune(21, 1)).toBe(1);
      expect(await store.audit.prune(21, 10)).toBe(1);
      expect(await store.audit.list(q)).toEqual([e3]);
    });
  });

  describe("erasure and retention", () => {
    it("finds a contact by id or user_id within its account only", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      await conversation(store, a, "alice", 10);
      const c = await store.privacy.contact(a.accountId, { userId: "alice" });
      expect(c).toMatchObject({ accountId: a.accountId, userId: "alice" });
      expect(await store.privacy.contact(a.accountId, { contactId: c!.contactId })).toEqual(c);
      expect(await store.privacy.contact(b.accountId, { contactId: c!.contactId })).toBeUndefined();
      expect(await store.privacy.contact(b.accountId, { userId: "alice" })).toBeUndefined();
    });

    it("erases a contact's rows and redacts its events, leaving another customer's whole", async () => {
      const { store } = h();
      const a = await account(store);
      const c1 = await conversation(store, a, "alice", 10);
      const c2 = await conversation(store, a, "alice", 20);
      const other = await conversation(store, a, "bob", 30);
      for (const u of ["alice", "alice", "bob"]) await session(store, a, u);
      await store.refreshTokens.revoke({ accountId: a.accountId, userId: "alice" }, 40);
      await store.events.append(
        [c1, c2, other].map((id) => ({
          event: {
            eventId: newId(),
            accountId: a.accountId,
            type: "message.created" as const,
            orderKey: id,
            data: { conversationId: id },
            createdAt: 50,
          },
          deliveries: [],
        })),
      );
      await store.events.append([
        {
          event: {
            eventId: newId(),
            accountId: a.accountId,
            type: "session.revoked",
            orderKey: "",
            data: { userId: "alice", revoked: 2 },
            createdAt: 60,
          },
          deliveries: [],
        },
      ]);
      const alice = (await store.privacy.contact(a.accountId, { userId: "alice" }))!;
      const aliceSessions = (await store.refreshTokens.list({ accountId: a.accountId, userId: "alice" }, 10, 0)).map(
        (t) => t.sessionId,
      );
      expect(aliceSessions).toHaveLength(2);
      const r = await store.privacy.erase(alice, 70);
      expect(r).toEqual({
        conversationIds: expect.arrayContaining([c1, c2]),
        messages: 4,
        sessions: 2,
        eventsRedacted: 3,
      });
      expect(r.conversationIds).toHaveLength(2);
      expect(await store.privacy.contact(a.accountId, { userId: "alice" })).toBeUndefined();
      expect(await store.conversations.byId(c1)).toBeUndefined();
      expect(await store.refreshTokens.list({ accountId: a.accountId, userId: "alice" }, 10, 0)).toEqual([]);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "alice")).toBeUndefined();
      // Each erased session leaves its lineage mark: an access token it issued stays refused, and names nothing of her.
      for (const sid of aliceSessions) {
        expect((await store.refreshTokens.frameAccess(a.chatbotId, "alice", sid)).notBefore).toBe(70);
        expect(await store.refreshTokens.lineageNotBefore([`session:${sid}`])).toBe(70);
      }
      const events = await store.events.list(a.accountId, 0, 10, []);
      expect(events.map((e) => e.data)).toEqual([
        { redacted: true },
        { redacted: true },
        { conversationId: other },
        { redacted: true },
      ]);
      // Bob is whole.
      expect(await store.conversations.byId(other)).toBeDefined();
      expect(await store.refreshTokens.list({ accountId: a.accountId, userId: "bob" }, 10, 0)).toHaveLength(1);
    });

    it("expires a chatbot's conversations idle since before an instant, the contact's latest last", async () => {
      const { store } = h();
      const a = await account(store);
      const old = await conversation(store, a, "alice", 10);
      const recent = await conversation(store, a, "alice", 1000);
      const lonely = await conversation(store, a, "bob", 20);
      expect((await store.privacy.expireConversations(a.chatbotId, 500, 10)).sort()).toEqual([old, lonely].sort());
      expect(await store.conversations.byId(old)).toBeUndefined();
      expect(await store.conversations.byId(recent)).toBeDefined();
      // Bob had no other conversation: his contact went with it; Alice's stays, with her latest conversation.
      expect(await store.privacy.contact(a.accountId, { userId: "bob" })).toBeUndefined();
      expect(await store.privacy.contact(a.accountId, { userId: "alice" })).toBeDefined();
      expect(await store.privacy.expireConversations(a.chatbotId, 500, 10)).toEqual([]);
    });

    it("keeps each chatbot's retention period", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      await store.privacy.setRetention(a.chatbotId, 30);
      await store.privacy.setRetention(b.chatbotId, 7);
      await store.privacy.setRetention(b.chatbotId, 14);
      const sorted = (await store.privacy.retentionPolicies()).sort((x, y) => x.days - y.days);
      expect(sorted).toEqual([
        { chatbotId: b.chatbotId, accountId: b.accountId, days: 14 },
        { chatbotId: a.chatbotId, accountId: a.accountId, days: 30 },
      ]);
      await store.privacy.setRetention(a.chatbotId, null);
      expect((await store.privacy.retentionPolicies()).map((p) => p.chatbotId)).toEqual([b.chatbotId]);
    });
  });
}
