import { describe, expect, it } from "vitest";
import type { MemberRecord } from "../../../src/domain/account/repository.js";
import { newId } from "../../../src/domain/ids.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

function member(accountId: string, email: string, o: Partial<MemberRecord> = {}): MemberRecord {
  return {
    memberId: newId(),
    accountId,
    email,
    role: "operator",
    passwordHash: null,
    invitationHash: `inv-${newId()}`,
    invitationExpiresAt: 1000,
    createdAt: 10,
    joinedAt: null,
    ...o,
  };
}

/** Members of accounts: one account per e-mail, reads and writes scoped to the account. */
export function memberCases(h: () => Harness) {
  describe("members", () => {
    it("stores a member and finds it by id within its account, by e-mail in any case, and by invitation", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const m = member(a.accountId, "Kim@Shop.example");
      await store.members.insert(m);
      expect(await store.members.byId(a.accountId, m.memberId)).toEqual(m);
      expect(await store.members.byId(b.accountId, m.memberId)).toBeUndefined();
      expect(await store.members.byEmail("kim@shop.EXAMPLE")).toEqual(m);
      expect(await store.members.byInvitation(m.invitationHash!)).toEqual(m);
      expect(await store.members.byInvitation("nope")).toBeUndefined();
    });

    it("refuses a second member with the same e-mail in any account, keeping the first", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      await store.members.insert(member(a.accountId, "sam@shop.example"));
      await expect(store.members.insert(member(b.accountId, "SAM@shop.example"))).rejects.toThrow();
      expect((await store.members.byEmail("sam@shop.example"))?.accountId).toBe(a.accountId);
    });

    it("joins a member unless the e-mail is a member of any account already, writing nothing then", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const first = member(a.accountId, "jo@shop.example", { invitationHash: null, joinedAt: 5 });
      expect(await store.members.join(first)).toBe(true);
      const second = member(b.accountId, "JO@shop.example", { invitationHash: null, joinedAt: 6 });
      expect(await store.members.join(second)).toBe(false);
      expect(await store.members.byId(b.accountId, second.memberId)).toBeUndefined();
      expect(await store.members.byEmail("jo@shop.example")).toEqual(first);
    });

    it("lists an account's members by e-mail, and only its own", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      for (const e of ["zoe@a.example", "al@a.example", "Mo@a.example"])
        await store.members.insert(member(a.accountId, e));
      await store.members.insert(member(b.accountId, "bo@b.example"));
      expect((await store.members.listForAccount(a.accountId)).map((m) => m.email)).toEqual([
        "al@a.example",
        "Mo@a.example",
        "zoe@a.example",
      ]);
      expect((await store.members.listForAccount(b.accountId)).map((m) => m.email)).toEqual(["bo@b.example"]);
    });

    it("an invitation is used once, and not after it expires", async () => {
      const { store } = h();
      const a = await account(store);
      const m = member(a.accountId, "new@a.example", { invitationExpiresAt: 1000 });
      await store.members.insert(m);
      expect(await store.members.acceptInvitation(m.invitationHash!, "scrypt$p", 1000)).toBe(false);
      const uses = await Promise.all(
        [1, 2, 3].map(() => store.members.acceptInvitation(m.invitationHash!, "scrypt$p", 999)),
      );
      expect(uses.filter(Boolean)).toHaveLength(1);
      expect(await store.members.byId(a.accountId, m.memberId)).toEqual({
        ...m,
        passwordHash: "scrypt$p",
        invitationHash: null,
        invitationExpiresAt: null,
        joinedAt: 999,
      });
      expect(await store.members.byInvitation(m.invitationHash!)).toBeUndefined();
    });

    it("updates and removes a member only through its own account", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const m = member(a.accountId, "lee@a.example");
      await store.members.insert(m);
      const joined = {
        memberId: m.memberId,
        role: "admin" as const,
        passwordHash: "scrypt$y",
        invitationHash: null,
        invitationExpiresAt: null,
        joinedAt: 20,
      };
      expect(await store.members.update({ ...joined, accountId: b.accountId })).toBe(false);
      expect((await store.members.byId(a.accountId, m.memberId))?.role).toBe("operator");
      expect(await store.members.update({ ...joined, accountId: a.accountId })).toBe(true);
      expect(await store.members.byId(a.accountId, m.memberId)).toEqual({ ...m, ...joined });
      expect(await store.members.remove(b.accountId, m.memberId)).toBe(false);
      expect(await store.members.remove(a.accountId, m.memberId)).toBe(true);
      expect(await store.members.byEmail("lee@a.example")).toBeUndefined();
      expect(await store.members.remove(a.accountId, m.memberId)).toBe(false);
    });
  });
}
