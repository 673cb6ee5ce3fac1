import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { Store } from "../../../src/domain/store.js";
import type { RefreshTokenRecord } from "../../../src/domain/token/repository.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

async function session(
  store: Store,
  o: { accountId: string; chatbotId: string },
  userId: string,
  createdAt: number,
): Promise<RefreshTokenRecord> {
  const r: RefreshTokenRecord = {
    tokenHash: newId().replaceAll("-", ""),
    sessionId: newId(),
    accountId: o.accountId,
    chatbotId: o.chatbotId,
    userId,
    createdAt,
    expiresAt: createdAt + 100_000,
    revokedAt: null,
    lastUsedAt: createdAt,
    lastOrigin: "",
    userAgent: "",
  };
  await store.refreshTokens.insert(r);
  return r;
}

/** Sessions (refresh tokens as the registry sees them), their rotation and policies, and launch codes. */
export function sessionCases(h: () => Harness) {
  describe("sessions", () => {
    it("lists an account's sessions newest first, narrowed by chatbot and user, paged; never another account's", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const s1 = await session(store, a, "u1", 10);
      const s2 = await session(store, a, "u2", 20);
      const s3 = await session(store, a, "u1", 30);
      await session(store, b, "u1", 40);
      const ids = (rows: RefreshTokenRecord[]) => rows.map((r) => r.sessionId);
      expect(ids(await store.refreshTokens.list({ accountId: a.accountId }, 10, 0))).toEqual([
        s3.sessionId,
        s2.sessionId,
        s1.sessionId,
      ]);
      expect(ids(await store.refreshTokens.list({ accountId: a.accountId, userId: "u1" }, 10, 0))).toEqual([
        s3.sessionId,
        s1.sessionId,
      ]);
      expect(ids(await store.refreshTokens.list({ accountId: a.accountId, chatbotId: a.chatbotId }, 2, 1))).toEqual([
        s2.sessionId,
        s1.sessionId,
      ]);
      // b's chatbot under a's account: nothing.
      expect(await store.refreshTokens.list({ accountId: a.accountId, chatbotId: b.chatbotId }, 10, 0)).toEqual([]);
      expect(await store.refreshTokens.bySession(s1.sessionId)).toEqual(s1);
    });

    it("revokes one session of its own account only; its not-before covers only that session's access tokens", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const mine = await session(store, a, "u1", 10);
      const sibling = await session(store, a, "u1", 11);
      expect(await store.refreshTokens.revokeSession(b.accountId, mine.sessionId, 50)).toBe(false);
      expect((await store.refreshTokens.bySession(mine.sessionId))?.revokedAt).toBeNull();
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1", mine.sessionId)).toBeUndefined();
      expect(await store.refreshTokens.revokeSession(a.accountId, mine.sessionId, 50)).toBe(true);
      expect(await store.refreshTokens.revokeSession(a.accountId, mine.sessionId, 60)).toBe(false);
      expect((await store.refreshTokens.bySession(mine.sessionId))?.revokedAt).toBe(50);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1", mine.sessionId)).toBe(50);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1", sibling.sessionId)).toBeUndefined();
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1")).toBeUndefined();
      // A user-wide revocation later is the later of the two.
      await store.refreshTokens.revoke({ accountId: a.accountId, userId: "u1" }, 70);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1", mine.sessionId)).toBe(70);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1", sibling.sessionId)).toBe(70);
    });

    it("frameAccess answers what notBefore and the chatbot answer, revocations included", async () => {
      const { store } = h();
      const tokens = store.refreshTokens;
      const a = await account(store);
      const mine = await session(store, a, "u1", 10);
      const sibling = await session(store, a, "u1", 11);
      const bot = { accountId: a.accountId, active: true };
      expect(await tokens.frameAccess(a.chatbotId, "u1", mine.sessionId)).toEqual({
        notBefore: undefined,
        chatbot: bot,
      });
      expect(await tokens.frameAccess("no-such-chatbot", "u1")).toEqual({ notBefore: undefined, chatbot: undefined });
      await tokens.revokeSession(a.accountId, mine.sessionId, 50);
      expect(await tokens.frameAccess(a.chatbotId, "u1", mine.sessionId)).toEqual({ notBefore: 50, chatbot: bot });
      expect(await tokens.frameAccess(a.chatbotId, "u1", sibling.sessionId)).toEqual({
        notBefore: undefined,
        chatbot: bot,
      });
      await tokens.revoke({ accountId: a.accountId, userId: "u1" }, 70);
      expect(await tokens.frameAccess(a.chatbotId, "u1")).toEqual({ notBefore: 70, chatbot: bot });
      expect(await tokens.frameAccess(a.chatbotId, "u1", sibling.sessionId)).toEqual({ notBefore: 70, chatbot: bot });
      const c = (await store.chatbots.byId(a.chatbotId))!;
      await store.chatbots.update({ ...c, active: false });
      expect((await tokens.frameAccess(a.chatbotId, "u2")).chatbot).toEqual({ accountId: a.accountId, active: false });
    });

    it("touches last use (never backwards), origin and user agent", async () => {
      const { store } = h();
      const a = await account(store);
      const s = await session(store, a, "u1", 10);
      await store.refreshTokens.touch(s.sessionId, 40, "https://shop.example", "Browser/1");
      await store.refreshTokens.touch(s.sessionId, 30, null, null);
      const r = await store.refreshTokens.bySession(s.sessionId);
      expect([r?.lastUsedAt, r?.lastOrigin, r?.userAgent]).toEqual([40, "https://shop.example", "Browser/1"]);
    });

    it("rotates a session's token once: the retired hash is kept with its salt, a second rotation from it loses", async () => {
      const { store } = h();
      const a = await account(store);
      const s = await session(store, a, "u1", 10);
      expect(await store.refreshTokens.rotate(s.sessionId, s.tokenHash, "next-hash", "salt-1", 20)).toBe(true);
      expect(await store.refreshTokens.rotate(s.sessionId, s.tokenHash, "other-hash", "salt-2", 21)).toBe(false);
      expect(await store.refreshTokens.byHash(s.tokenHash)).toBeUndefined();
      expect((await store.refreshTokens.byHash("next-hash"))?.sessionId).toBe(s.sessionId);
      expect(await store.refreshTokens.rotated(s.tokenHash)).toEqual({
        tokenHash: s.tokenHash,
        sessionId: s.sessionId,
        rotatedAt: 20,
        successorSalt: "salt-1",
      });
      expect(await store.refreshTokens.rotated("other-hash")).toBeUndefined();
    });

    it("keeps each chatbot's session policy", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      expect(await store.refreshTokens.policy(a.chatbotId)).toBeUndefined();
      await store.refreshTokens.setPolicy({ chatbotId: a.chatbotId, rotate: true, reuseGraceMs: 30_000 });
      await store.refreshTokens.setPolicy({ chatbotId: a.chatbotId, rotate: true, reuseGraceMs: 5_000 });
      expect(await store.refreshTokens.policy(a.chatbotId)).toEqual({
        chatbotId: a.chatbotId,
        rotate: true,
        reuseGraceMs: 5_000,
      });
      expect(await store.refreshTokens.policy(b.chatbotId)).toBeUndefined();
    });
  });

  describe("launch codes", () => {
    it("stores a code by hash and lets exactly one use mark it", async () => {
      const { store } = h();
      const a = await account(store);
      const s = await session(store, a, "u1", 10);
      const code = {
        codeHash: "code-hash",
        accountId: a.accountId,
        chatbotId: a.chatbotId,
        userId: "u1",
        sessionId: s.sessionId,
        origin: "https://shop.example",
        createdAt: 10,
        expiresAt: 60_010,
        usedAt: null,
      };
      await store.launchCodes.insert(code);
      expect(await store.launchCodes.byHash("code-hash")).toEqual(code);
      const uses = await Promise.all([
        store.launchCodes.markUsed("code-hash", 20),
        store.launchCodes.markUsed("code-hash", 21),
      ]);
      expect(uses.filter(Boolean)).toHaveLength(1);
      expect((await store.launchCodes.byHash("code-hash"))?.usedAt).toBeTypeOf("number");
      expect(await store.launchCodes.markUsed("missing", 22)).toBe(false);
      expect(await store.launchCodes.byHash("missing")).toBeUndefined();
    });
  });
}
