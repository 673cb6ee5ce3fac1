import { describe, expect, it } from "vitest";
import { DEFAULT_APPEARANCE } from "../../../src/domain/account/appearance.js";
import { newId } from "../../../src/domain/ids.js";
import { account, apiKeyRecord, bareAccount } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** Accounts, API keys, chatbots and the demo setup. */
export function accountCases(h: () => Harness) {
  describe("accounts", () => {
    it("stores an account and finds it by id and by e-mail (case-insensitively); any() says one exists", async () => {
      const { store } = h();
      expect(await store.accounts.any()).toBe(false);
      const a = { accountId: newId(), email: "Owner@Example.com", passwordHash: null, active: true, createdAt: 5 };
      await store.accounts.insert(a);
      expect(await store.accounts.byId(a.accountId)).toEqual(a);
      expect(await store.accounts.byEmail("owner@example.com")).toEqual(a);
      expect(await store.accounts.byId(newId())).toBeUndefined();
      expect(await store.accounts.any()).toBe(true);
      await store.accounts.setPassword(a.accountId, "scrypt$x");
      expect((await store.accounts.byId(a.accountId))?.passwordHash).toBe("scrypt$x");
    });

    it("refuses a second account with the same e-mail in any case, and keeps the first", async () => {
      const { store } = h();
      await store.accounts.insert({
        accountId: newId(),
        email: "a@x.example",
        passwordHash: null,
        active: true,
        createdAt: 1,
      });
      await expect(
        store.accounts.insert({
          accountId: newId(),
          email: "A@X.example",
          passwordHash: null,
          active: true,
          createdAt: 2,
        }),
      ).rejects.toThrow();
      expect((await store.accounts.byEmail("a@x.example"))?.createdAt).toBe(1);
    });

    it("pages accounts in e-mail order after a given e-mail", async () => {
      const { store } = h();
      for (const e of ["c@x.example", "a@x.example", "b@x.example", "d@x.example"])
        await store.accounts.insert({ accountId: newId(), email: e, passwordHash: null, active: true, createdAt: 1 });
      expect((await store.accounts.page("", 2)).map((a) => a.email)).toEqual(["a@x.example", "b@x.example"]);
      expect((await store.accounts.page("b@x.example", 5)).map((a) => a.email)).toEqual(["c@x.example", "d@x.example"]);
    });
  });

  describe("API keys", () => {
    const key = (accountId: string, createdAt: number) => ({
      apiKeyId: newId(),
      accountId,
      keyHash: newId(),
      hint: "cak_abcd",
      name: "",
      createdAt,
      revokedAt: null,
      expiresAt: null,
      lastUsedAt: null,
    });

    it("finds a key by hash, lists an account's keys oldest first and no other account's", async () => {
      const { store } = h();
      const a = await bareAccount(store);
      const b = await bareAccount(store);
      const k2 = key(a, 20);
      const k1 = key(a, 10);
      const other = key(b, 5);
      for (const k of [k2, k1, other]) await store.apiKeys.insert(k);
      expect(await store.apiKeys.byHash(k1.keyHash)).toEqual(k1);
      expect(await store.apiKeys.byHash("nope")).toBeUndefined();
      expect((await store.apiKeys.listForAccount(a)).map((k) => k.apiKeyId)).toEqual([k1.apiKeyId, k2.apiKeyId]);
    });

    it("reads a key with its account in one call, the account's state as stored", async () => {
      const { store } = h();
      const a = {
        accountId: newId(),
        email: `on-${newId()}@x.example`,
        passwordHash: null,
        active: true,
        createdAt: 3,
      };
      const off = { ...a, accountId: newId(), email: `off-${newId()}@x.example`, active: false };
      for (const acc of [a, off]) await store.accounts.insert(acc);
      const k = key(a.accountId, 10);
      const kOff = key(off.accountId, 11);
      for (const x of [k, kOff]) await store.apiKeys.insert(x);
      expect(await store.apiKeys.byHashWithAccount(k.keyHash)).toEqual({ key: k, account: a });
      expect(await store.apiKeys.byHashWithAccount(kOff.keyHash)).toEqual({ key: kOff, account: off });
      expect(await store.apiKeys.byHashWithAccount("nope")).toBeUndefined();
      await store.apiKeys.revoke(a.accountId, k.apiKeyId, 50);
      expect((await store.apiKeys.byHashWithAccount(k.keyHash))?.key.revokedAt).toBe(50);
    });

    it("revokes one key or all of an account's unrevoked keys, counting only those it revoked", async () => {
      const { store } = h();
      const a = await bareAccount(store);
      const b = await bareAccount(store);
      const [k1, k2, k3] = [key(a, 1), key(a, 2), key(a, 3)];
      const foreign = key(b, 1);
      for (const k of [k1!, k2!, k3!, foreign]) await store.apiKeys.insert(k);
      // Another account's key is not reached by this account's revocation.
      expect(await store.apiKeys.revoke(a, foreign.apiKeyId, 100)).toBe(0);
      expect(await store.apiKeys.revoke(a, k1!.apiKeyId, 100)).toBe(1);
      expect(await store.apiKeys.revoke(a, k1!.apiKeyId, 200)).toBe(0);
      expect(await store.apiKeys.revoke(a, "all", 300)).toBe(2);
      const revoked = await store.apiKeys.listForAccount(a);
      expect(revoked.map((k) => k.revokedAt)).toEqual([100, 300, 300]);
      expect((await store.apiKeys.byHash(foreign.keyHash))?.revokedAt).toBeNull();
    });

    it("expireAllBut never extends an earlier end; touch records a use only past the resolution", async () => {
      const { store } = h();
      const a = await bareAccount(store);
      const [k1, k2, keep] = [key(a, 1), key(a, 2), key(a, 3)];
      for (const k of [k1!, k2!, keep!]) await store.apiKeys.insert(k);
      await store.apiKeys.expireAllBut(a, keep!.apiKeyId, 500);
      await store.apiKeys.expireAllBut(a, keep!.apiKeyId, 900);
      const after = await store.apiKeys.listForAccount(a);
      expect(after.map((k) => k.expiresAt)).toEqual([500, 500, null]);
      await store.apiKeys.touch(k1!.apiKeyId, 1000, 0);
      await store.apiKeys.touch(k1!.apiKeyId, 1500, 1000);
      expect((await store.apiKeys.byHash(k1!.keyHash))?.lastUsedAt).toBe(1000);
      await store.apiKeys.touch(k1!.apiKeyId, 2500, 1500);
      expect((await store.apiKeys.byHash(k1!.keyHash))?.lastUsedAt).toBe(2500);
    });
  });

  describe("chatbots and the demo setup", () => {
    it("stores a chatbot with its origins and knowledge; update reaches only the owner's chatbot", async () => {
      const { store } = h();
      const a = await bareAccount(store);
      const b = await bareAccount(store);
      const c = {
        chatbotId: newId(),
        accountId: a,
        name: "Shop",
        allowedOrigins: ["https://shop.example", "https://www.shop.example"],
        knowledge: [{ title: "Returns", url: "https://shop.example/r", snippet: "30 days" }],
        agent: { kind: "built_in" as const },
        appearance: DEFAULT_APPEARANCE,
        active: true,
        createdAt: 7,
        pictureId: "",
        // A new chatbot has no first-response SLA; a chatbot update sets one.
        firstResponseSlaMinutes: 0,
      };
      await store.chatbots.insert(c);
      expect(await store.chatbots.byId(c.chatbotId)).toEqual(c);
      expect((await store.chatbots.listForAccount(a)).map((x) => x.chatbotId)).toEqual([c.chatbotId]);
      expect(await store.chatbots.listForAccount(b)).toEqual([]);
      const change = {
        chatbotId: c.chatbotId,
        name: "Shop 2",
        allowedOrigins: ["https://a.example"],
        knowledge: [],
        agent: { kind: "openai_compatible" as const, baseUrl: "https://llm.example/v1", model: "m", apiKeySealed: "s" },
        appearance: {
          brandColor: "#0a7d3b",
          greeting: "Hello!\nAsk us anything.",
          agentName: "Ava",
          theme: "dark" as const,
          officeHours: { timeZone: "Europe/Berlin", intervals: [{ weekday: 1, open: "09:00", close: "17:00" }] },
          // Issue 46: the frame's default language and the chatbot's own texts per language.
          defaultLocale: "ar",
          texts: { ar: { greeting: "مرحبًا!", awayMessage: "", ratingPrompt: "كيف كانت تجربتك؟" } },
        },
        active: false,
      };
      expect(await store.chatbots.update({ ...change, accountId: b })).toBe(false);
      expect((await store.chatbots.byId(c.chatbotId))?.name).toBe("Shop");
      expect(await store.chatbots.update({ ...change, accountId: a })).toBe(true);
      expect(await store.chatbots.byId(c.chatbotId)).toEqual({ ...c, ...change, accountId: a });
    });

    it("keeps a chatbot's agent picture in its row: set, found by id while active, replaced, removed", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      const pic = { pictureId: "c".repeat(32), contentType: "image/png" as const, bytes };
      const plain = (p: Awaited<ReturnType<typeof store.chatbots.picture>>) => p && { ...p, bytes: [...p.bytes] };
      expect((await store.chatbots.byId(a.chatbotId))?.pictureId).toBe("");
      // Another account's chatbot: nothing set.
      expect(await store.chatbots.setPicture(b.accountId, a.chatbotId, pic)).toBe(false);
      expect(await store.chatbots.picture(pic.pictureId)).toBeUndefined();
      expect(await store.chatbots.setPicture(a.accountId, a.chatbotId, pic)).toBe(true);
      expect((await store.chatbots.byId(a.chatbotId))?.pictureId).toBe(pic.pictureId);
      expect((await store.chatbots.listForAccount(a.accountId))[0]?.pictureId).toBe(pic.pictureId);
      expect(plain(await store.chatbots.picture(pic.pictureId))).toEqual({ ...pic, bytes: [...bytes] });
      expect(await store.chatbots.picture("")).toBeUndefined();
      // A settings update keeps the picture; a disabled chatbot's is not found.
      const c = (await store.chatbots.byId(a.chatbotId))!;
      expect(await store.chatbots.update({ ...c, name: "renamed", pictureId: "" })).toBe(true);
      expect((await store.chatbots.byId(a.chatbotId))?.pictureId).toBe(pic.pictureId);
      expect(await store.chatbots.update({ ...c, active: false })).toBe(true);
      expect(await store.chatbots.picture(pic.pictureId)).toBeUndefined();
      expect(await store.chatbots.update({ ...c, active: true })).toBe(true);
      const next = { pictureId: "d".repeat(32), contentType: "image/webp" as const, bytes: new Uint8Array([9]) };
      expect(await store.chatbots.setPicture(a.accountId, a.chatbotId, next)).toBe(true);
      expect(await store.chatbots.picture(pic.pictureId)).toBeUndefined();
      expect(plain(await store.chatbots.picture(next.pictureId))).toEqual({ ...next, bytes: [9] });
      expect(await store.chatbots.setPicture(a.accountId, a.chatbotId, undefined)).toBe(true);
      expect(await store.chatbots.picture(next.pictureId)).toBeUndefined();
      expect((await store.chatbots.byId(a.chatbotId))?.pictureId).toBe("");
    });

    it("keeps one demo setup record, replaced by set", async () => {
      const { store } = h();
      expect(await store.demoSetup.get()).toBeUndefined();
      const a = await bareAccount(store);
      const c = newId();
      await store.chatbots.insert({
        chatbotId: c,
        accountId: a,
        name: "d",
        allowedOrigins: [],
        knowledge: [],
        agent: { kind: "built_in" },
        appearance: DEFAULT_APPEARANCE,
        active: true,
        createdAt: 1,
      });
      const k1 = newId();
      const k2 = newId();
      for (const k of [k1, k2]) await store.apiKeys.insert(apiKeyRecord(a, { apiKeyId: k }));
      await store.demoSetup.set({ accountId: a, chatbotId: c, apiKeyId: k1 });
      await store.demoSetup.set({ accountId: a, chatbotId: c, apiKeyId: k2 });
      expect(await store.demoSetup.get()).toEqual({ accountId: a, chatbotId: c, apiKeyId: k2 });
    });
  });
}
