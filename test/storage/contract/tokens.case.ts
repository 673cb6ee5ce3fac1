import { describe, expect, it } from "vitest";
import { DEFAULT_APPEARANCE } from "../../../src/domain/account/appearance.js";
import { foldForSearch } from "../../../src/domain/conversation/search-fold.js";
import { newId } from "../../../src/domain/ids.js";
import { account, apiKeyRecord, contactQuery, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** When the sessions of issueSession's cases are issued. */
const NOW = 5_000;

/** Store.issueSession's input: a new session of (account, chatbot, user) at NOW, for the key with this hash. */
const issue = (o: { accountId: string; chatbotId: string }, keyHash: string, userId: string) => ({
  keyHash,
  token: {
    tokenHash: newId(),
    sessionId: newId(),
    accountId: o.accountId,
    chatbotId: o.chatbotId,
    userId,
    createdAt: NOW,
    expiresAt: NOW + 10_000,
    revokedAt: null,
    lastUsedAt: NOW,
    lastOrigin: "",
    userAgent: "ua",
  },
});

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

    it("reads what an ID token is checked against together, and sees a revocation or a revoked key made after", async () => {
      const { store } = h();
      const a = await account(store);
      const key = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(key);
      // A frozen lineage, as the token check passes it (the SQLite store keeps the reads by it while nothing changes).
      const lineage = Object.freeze([`person:${a.accountId}:x@example.com`, `session:${newId()}`]);
      const first = await store.refreshTokens.idTokenAccess(a.accountId, lineage, true);
      expect(first.account).toEqual(await store.accounts.byId(a.accountId));
      expect(first.notBefore).toBeUndefined();
      expect(first.keys?.map((k) => k.apiKeyId)).toEqual([key.apiKeyId]);
      expect((await store.refreshTokens.idTokenAccess(a.accountId, lineage, false)).keys).toBeUndefined();

      await store.refreshTokens.revokeLineage([lineage[1]!], 300);
      expect((await store.refreshTokens.idTokenAccess(a.accountId, lineage, true)).notBefore).toBe(300);
      await store.apiKeys.revoke(a.accountId, key.apiKeyId, 400);
      expect((await store.refreshTokens.idTokenAccess(a.accountId, lineage, true)).keys?.[0]?.revokedAt).toBe(400);
      // Another account named with the same lineage is read as that account.
      const b = await account(store);
      expect((await store.refreshTokens.idTokenAccess(b.accountId, lineage, false)).account?.accountId).toBe(
        b.accountId,
      );
      expect((await store.refreshTokens.idTokenAccess(newId(), lineage, false)).account).toBeUndefined();
    });

    it("reads a refresh token with whether its account is active", async () => {
      const { store } = h();
      const off = await account(store, 1, false);
      const t = token(off, "u1");
      await store.refreshTokens.insert(t);
      expect(await store.refreshTokens.byHashWithAccount(t.tokenHash)).toEqual({ token: t, accountActive: false });
    });
  });

  describe("a session issued for an API key seen valid (issueSession)", () => {
    /** Nothing of the issue was written: no session, no contact. */
    const nothingWritten = async (store: Harness["store"], s: ReturnType<typeof issue>) => {
      expect(await store.refreshTokens.byHash(s.token.tokenHash)).toBeUndefined();
      expect(await store.privacy.contact(s.token.accountId, { userId: s.token.userId })).toBeUndefined();
    };

    it("checks the key, its account and the chatbot, then writes the session and the contact", async () => {
      const { store } = h();
      const a = await account(store);
      const key = apiKeyRecord(a.accountId, { lastUsedAt: 7 });
      await store.apiKeys.insert(key);
      const s = issue(a, key.keyHash, "u1");
      expect(await store.issueSession(s)).toEqual({ issued: true, apiKeyId: key.apiKeyId, keyLastUsedAt: 7 });
      expect(await store.refreshTokens.byHash(s.token.tokenHash)).toEqual(s.token);
      expect((await store.privacy.contact(a.accountId, { userId: "u1" }))?.createdAt).toBe(NOW);
      // A known contact's profile is kept (nothing to fold), and a key in its rotation grace still issues.
      await store.contacts.upsert(a.accountId, "u2", { contactName: "Ann", email: "", phoneNumber: "" }, 1);
      const expiring = apiKeyRecord(a.accountId, { expiresAt: NOW + 1 });
      await store.apiKeys.insert(expiring);
      expect((await store.issueSession(issue(a, expiring.keyHash, "u2"))).issued).toBe(true);
      expect((await store.privacy.contact(a.accountId, { userId: "u2" }))?.contactName).toBe("Ann");
    });

    it("refuses a revoked key, or one past its rotation grace, as revoked, and writes nothing", async () => {
      const { store } = h();
      const a = await account(store);
      const revoked = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(revoked);
      await store.apiKeys.revoke(a.accountId, revoked.apiKeyId, NOW - 1);
      const s1 = issue(a, revoked.keyHash, "u1");
      expect(await store.issueSession(s1)).toEqual({ issued: false, revoked: true });
      await nothingWritten(store, s1);
      const expired = apiKeyRecord(a.accountId, { expiresAt: NOW });
      await store.apiKeys.insert(expired);
      const s2 = issue(a, expired.keyHash, "u1");
      expect(await store.issueSession(s2)).toEqual({ issued: false, revoked: true });
      await nothingWritten(store, s2);
    });

    it("refuses an inactive account, an unknown key and a key of another account, and writes nothing", async () => {
      const { store } = h();
      const off = await account(store, 1, false);
      const offKey = apiKeyRecord(off.accountId);
      await store.apiKeys.insert(offKey);
      const s1 = issue(off, offKey.keyHash, "u1");
      expect(await store.issueSession(s1)).toEqual({ issued: false, revoked: false });
      await nothingWritten(store, s1);
      const a = await account(store);
      const s2 = issue(a, newId(), "u1");
      expect(await store.issueSession(s2)).toEqual({ issued: false, revoked: false });
      await nothingWritten(store, s2);
      // The key is another account's: the one the caller names is not the key's.
      const s3 = issue(a, offKey.keyHash, "u1");
      expect(await store.issueSession(s3)).toEqual({ issued: false, revoked: false });
      await nothingWritten(store, s3);
    });

    it("refuses a chatbot of another account, an inactive one and an unknown one, and writes nothing", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const key = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(key);
      const asleep = newId();
      await store.chatbots.insert({
        chatbotId: asleep,
        accountId: a.accountId,
        name: "off",
        allowedOrigins: [],
        knowledge: [],
        agent: { kind: "built_in" },
        appearance: DEFAULT_APPEARANCE,
        active: false,
        createdAt: 1,
      });
      for (const chatbotId of [b.chatbotId, asleep, newId()]) {
        const s = issue({ accountId: a.accountId, chatbotId }, key.keyHash, "u1");
        expect(await store.issueSession(s)).toEqual({ issued: false, revoked: false });
        await nothingWritten(store, s);
      }
    });
  });

  describe("a session issued for an API key seen valid, with a launch code or a contact profile", () => {
    const launch = (embedOrigin: string) => ({ codeHash: newId(), expiresAt: NOW + 60_000, embedOrigin });

    it("stores the launch code with the session for an origin the chatbot allows (its only one when none is asked)", async () => {
      const { store } = h();
      const a = await account(store);
      const key = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(key);
      for (const asked of ["", "https://shop.example/checkout?step=2"]) {
        const s = { ...issue(a, key.keyHash, "u1"), launch: launch(asked) };
        expect(await store.issueSession(s)).toMatchObject({ issued: true, launchOrigin: "https://shop.example" });
        expect(await store.refreshTokens.byHash(s.token.tokenHash)).toEqual(s.token);
        expect(await store.launchCodes.byHash(s.launch.codeHash)).toEqual({
          codeHash: s.launch.codeHash,
          accountId: a.accountId,
          chatbotId: a.chatbotId,
          userId: "u1",
          sessionId: s.token.sessionId,
          origin: "https://shop.example",
          createdAt: NOW,
          expiresAt: NOW + 60_000,
          usedAt: null,
        });
      }
    });

    it("refuses an origin the chatbot does not allow, or none where it allows several, and writes nothing", async () => {
      const { store } = h();
      const a = await account(store);
      const key = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(key);
      const several = newId();
      const origins = ["https://a.example", "https://b.example:8443"];
      await store.chatbots.insert({
        chatbotId: several,
        accountId: a.accountId,
        name: "two sites",
        allowedOrigins: origins,
        knowledge: [],
        agent: { kind: "built_in" },
        appearance: DEFAULT_APPEARANCE,
        active: true,
        createdAt: 1,
      });
      const refused = [
        [a.chatbotId, "https://other.example", ["https://shop.example"]],
        [a.chatbotId, "not an address", ["https://shop.example"]],
        [several, "", origins],
        [several, "https://b.example", origins],
      ] as const;
      for (const [chatbotId, asked, allowed] of refused) {
        const s = { ...issue({ accountId: a.accountId, chatbotId }, key.keyHash, "u1"), launch: launch(asked) };
        expect(await store.issueSession(s)).toEqual({ issued: false, revoked: false, allowedOrigins: allowed });
        expect(await store.refreshTokens.byHash(s.token.tokenHash)).toBeUndefined();
        expect(await store.launchCodes.byHash(s.launch.codeHash)).toBeUndefined();
        expect(await store.privacy.contact(a.accountId, { userId: "u1" })).toBeUndefined();
      }
      const s = { ...issue({ accountId: a.accountId, chatbotId: several }, key.keyHash, "u1") };
      const ok = { ...s, launch: launch("https://b.example:8443/") };
      expect(await store.issueSession(ok)).toMatchObject({ issued: true, launchOrigin: "https://b.example:8443" });
      // A key refused is said before the origin is looked at.
      const other = await account(store);
      const bad = { ...issue(other, key.keyHash, "u1"), launch: launch("https://other.example") };
      expect(await store.issueSession(bad)).toEqual({ issued: false, revoked: false });
    });

    it("folds a contact profile into the contact as ensure does, and its search text with it", async () => {
      const { store } = h();
      const a = await account(store);
      const key = apiKeyRecord(a.accountId);
      await store.apiKeys.insert(key);
      const withProfile = (userId: string, contactName: string, email: string, phoneNumber: string) => ({
        ...issue(a, key.keyHash, userId),
        profile: { contactName, email, phoneNumber },
      });
      // A new contact, and a stored one whose fields are merged one by one (an empty field keeps the stored value).
      expect((await store.issueSession(withProfile("u1", "Émile Zola", "", "+1 555"))).issued).toBe(true);
      await store.contacts.upsert(a.accountId, "u2", { contactName: "Łucja Ørsted", email: "", phoneNumber: "" }, 1);
      expect((await store.issueSession(withProfile("u2", "", "LUCJA@X.example", ""))).issued).toBe(true);
      expect((await store.issueSession(withProfile("u2", "", "", "+48 22"))).issued).toBe(true);
      // The same profile again changes nothing.
      expect((await store.issueSession(withProfile("u2", "", "LUCJA@X.example", ""))).issued).toBe(true);
      await message(store, a, newId(), { at: 10, start: true, userId: "u1" });
      await message(store, a, newId(), { at: 11, start: true, userId: "u2" });
      const found = async (search: string) =>
        (await store.contacts.list(contactQuery(a.accountId, { search: foldForSearch(search) }))).contacts.map((c) => [
          c.userId,
          c.contactName,
          c.email,
          c.phoneNumber,
        ]);
      const u1 = ["u1", "Émile Zola", "", "+1 555"];
      const u2 = ["u2", "Łucja Ørsted", "LUCJA@X.example", "+48 22"];
      expect(await found("emile")).toEqual([u1]);
      expect(await found("+1 5")).toEqual([u1]);
      expect(await found("lucja orsted")).toEqual([u2]);
      expect(await found("lucja@x")).toEqual([u2]);
      expect(await found("+48")).toEqual([u2]);
      expect(await found("u2")).toEqual([u2]);
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
