import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** Refresh tokens, revocation instants and signing keys: the state every instance shares. */
export function tokenCases(h: () => Harness) {
  describe("refresh tokens and revocation", () => {
    const token = (o: { accountId: string; chatbotId: string }, userId: string) => ({
      tokenHash: newId(),
      sessionId: newId(),
      accountId: o.accountId,
      chatbotId: o.chatbotId,
      userId,
      createdAt: 1,
      expiresAt: 10_000,
      revokedAt: null,
      lastUsedAt: 1,
      lastOrigin: "",
      userAgent: "",
    });
    it("revokes by account, chatbot and user scope, and raises not-before only for the users reached", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const t1 = token(a, "u1");
      const t2 = token(a, "u2");
      const t3 = token(b, "u1");
      for (const t of [t1, t2, t3]) await store.refreshTokens.insert(t);
      expect(await store.refreshTokens.byHash(t1.tokenHash)).toEqual(t1);
      expect(await store.refreshTokens.byHashWithAccount(t1.tokenHash)).toEqual({ token: t1, accountActive: true });
      expect(await store.refreshTokens.byHashWithAccount("nope")).toBeUndefined();
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1")).toBeUndefined();

      expect(await store.refreshTokens.revoke({ accountId: a.accountId, userId: "u1" }, 100)).toBe(1);
      expect((await store.refreshTokens.byHash(t1.tokenHash))?.revokedAt).toBe(100);
      // The revocation is read with the account's state, in the same statement.
      expect((await store.refreshTokens.byHashWithAccount(t1.tokenHash))?.token.revokedAt).toBe(100);
      expect((await store.refreshTokens.byHash(t2.tokenHash))?.revokedAt).toBeNull();
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u1")).toBe(100);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u2")).toBeUndefined();
      // Another account's tokens of a user with the same id are untouched.
      expect((await store.refreshTokens.byHash(t3.tokenHash))?.revokedAt).toBeNull();
      expect(await store.refreshTokens.notBefore(b.chatbotId, "u1")).toBeUndefined();

      expect(await store.refreshTokens.revoke({ accountId: a.accountId, chatbotId: a.chatbotId }, 200)).toBe(1);
      expect(await store.refreshTokens.notBefore(a.chatbotId, "u2")).toBe(200);
    });

    it("reads a refresh token with whether its account is active", async () => {
      const { store } = h();
      const off = await account(store, 1, false);
      const t = token(off, "u1");
      await store.refreshTokens.insert(t);
      expect(await store.refreshTokens.byHashWithAccount(t.tokenHash)).toEqual({ token: t, accountActive: false });
    });
  });

  describe("signing keys", () => {
    const rec = (kid: string, createdAt: number) => ({
      kid,
      alg: "ES256",
      privateJwk: `sealed-${kid}`,
      publicJwk: `{"kid":"${kid}"}`,
      createdAt,
      retiredAt: null,
    });

    it("lists keys oldest first; retireAllBut retires every other active key once", async () => {
      const { store } = h();
      await store.signingKeys.insert(rec("k2", 20));
      await store.signingKeys.insert(rec("k1", 10));
      await store.signingKeys.retireAllBut("k2", 30);
      await store.signingKeys.insert(rec("k3", 40));
      await store.signingKeys.retireAllBut("k3", 50);
      expect((await store.signingKeys.list()).map((k) => [k.kid, k.retiredAt])).toEqual([
        ["k1", 30],
        ["k2", 50],
        ["k3", null],
      ]);
    });

    it("replaces a private key's stored form only if it is still the one the caller read", async () => {
      const { store } = h();
      await store.signingKeys.insert(rec("k1", 10));
      await store.signingKeys.replacePrivateJwk("k1", "something else", "lost");
      expect((await store.signingKeys.list())[0]?.privateJwk).toBe("sealed-k1");
      await store.signingKeys.replacePrivateJwk("k1", "sealed-k1", "resealed");
      expect((await store.signingKeys.list())[0]?.privateJwk).toBe("resealed");
    });
  });
}
