import { describe, expect, it } from "vitest";
import type { InvitationRecord } from "../../../src/domain/account/repository.js";
import { newId } from "../../../src/domain/ids.js";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

function invitation(accountId: string, email: string, o: Partial<InvitationRecord> = {}): InvitationRecord {
  return {
    invitationId: newId(),
    accountId,
    email,
    role: "operator",
    codeHash: `inv-${newId()}`,
    expiresAt: 1000,
    createdAt: 10,
    ...o,
  };
}

/** Invitations: each account's own, one per e-mail in it; other accounts' invitations and members play no part. */
export function invitationCases(h: () => Harness) {
  describe("invitations", () => {
    it("one per e-mail in an account, in any case; another account invites the same e-mail freely", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const first = invitation(a.accountId, "Kim@Shop.example");
      expect(await store.invitations.insert(first)).toBe(true);
      const again = invitation(a.accountId, "kim@shop.EXAMPLE");
      expect(await store.invitations.insert(again)).toBe(false);
      expect(await store.invitations.byId(a.accountId, again.invitationId)).toBeUndefined();
      // A member of a third account with this e-mail blocks nothing either.
      const c = await account(store);
      await store.members.insert({
        memberId: newId(),
        accountId: c.accountId,
        email: "kim@shop.example",
        role: "operator",
        passwordHash: "scrypt$x",
        invitationHash: null,
        invitationExpiresAt: null,
        createdAt: 1,
        joinedAt: 2,
      });
      const theirs = invitation(b.accountId, "KIM@shop.example");
      await store.invitations.insert(theirs);
      expect(await store.invitations.byEmail(a.accountId, "kim@shop.example")).toEqual(first);
      expect(await store.invitations.byEmail(b.accountId, "kim@shop.example")).toEqual(theirs);
      expect(await store.invitations.byEmail(c.accountId, "kim@shop.example")).toBeUndefined();
      expect(await store.invitations.byId(a.accountId, first.invitationId)).toEqual(first);
      expect(await store.invitations.byId(b.accountId, first.invitationId)).toBeUndefined();
      expect(await store.invitations.byCode(theirs.codeHash)).toEqual(theirs);
      expect(await store.invitations.byCode("nope")).toBeUndefined();
    });

    it("finds another account's earlier unexpired invitation of the same e-mail, in any case (issue 47)", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const email = `early-${newId()}@shop.example`;
      const mine = invitation(a.accountId, email, { createdAt: 20 });
      await store.invitations.insert(mine);
      expect(await store.invitations.earlierElsewhere(mine, 500)).toBe(false);
      const later = invitation(b.accountId, email.toUpperCase(), { createdAt: 30 });
      await store.invitations.insert(later);
      // B's is later than A's: it does not hold A's back; A's holds B's back while it is unexpired.
      expect(await store.invitations.earlierElsewhere(mine, 500)).toBe(false);
      expect(await store.invitations.earlierElsewhere(later, 500)).toBe(true);
      expect(await store.invitations.earlierElsewhere(later, 1000)).toBe(false);
      // The same account's own invitation never counts, nor one of the same instant.
      expect(await store.invitations.earlierElsewhere({ ...later, accountId: a.accountId }, 500)).toBe(false);
      expect(await store.invitations.earlierElsewhere({ ...later, createdAt: 20 }, 500)).toBe(false);
    });

    it("lists an account's invitations by e-mail, and only its own", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      for (const e of ["zoe@a.example", "al@a.example", "Mo@a.example"])
        await store.invitations.insert(invitation(a.accountId, e));
      await store.invitations.insert(invitation(b.accountId, "bo@b.example"));
      expect((await store.invitations.listForAccount(a.accountId)).map((i) => i.email)).toEqual([
        "al@a.example",
        "Mo@a.example",
        "zoe@a.example",
      ]);
      expect((await store.invitations.listForAccount(b.accountId)).map((i) => i.email)).toEqual(["bo@b.example"]);
    });

    it("is taken once, and not after it expires", async () => {
      const { store } = h();
      const a = await account(store);
      const i = invitation(a.accountId, "new@a.example", { expiresAt: 1000 });
      await store.invitations.insert(i);
      expect(await store.invitations.take(i.codeHash, 1000)).toBe(false);
      const uses = await Promise.all([1, 2, 3].map(() => store.invitations.take(i.codeHash, 999)));
      expect(uses.filter(Boolean)).toHaveLength(1);
      expect(await store.invitations.byCode(i.codeHash)).toBeUndefined();
    });

    it("is changed and removed only through its own account", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      const i = invitation(a.accountId, "lee@a.example");
      await store.invitations.insert(i);
      const next = { invitationId: i.invitationId, role: "admin" as const, codeHash: "inv-new", expiresAt: 5000 };
      expect(await store.invitations.update({ ...next, accountId: b.accountId })).toBe(false);
      expect(await store.invitations.update({ ...next, accountId: a.accountId })).toBe(true);
      expect(await store.invitations.byId(a.accountId, i.invitationId)).toEqual({ ...i, ...next });
      expect(await store.invitations.remove(b.accountId, i.invitationId)).toBe(false);
      expect(await store.invitations.remove(a.accountId, i.invitationId)).toBe(true);
      expect(await store.invitations.remove(a.accountId, i.invitationId)).toBe(false);
    });
  });
}
