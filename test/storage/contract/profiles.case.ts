import { describe, expect, it } from "vitest";
import { account } from "./fixtures.js";
import type { Harness } from "./harness.js";

/** The people's display names and pictures: one per (account, e-mail in any case), replaced, never across accounts. */
export function profileCases(h: () => Harness) {
  describe("operator profiles", () => {
    it("stores a profile per account and e-mail, finds it in any case, replaces it, and keeps accounts apart", async () => {
      const { store } = h();
      const a = await account(store);
      const b = await account(store);
      expect(await store.profiles.get(a.accountId, "sam@shop.example")).toBeUndefined();
      await store.profiles.set(a.accountId, "Sam@Shop.example", { displayName: "Sam", avatarUrl: "" }, 10);
      expect(await store.profiles.get(a.accountId, "sam@SHOP.example")).toEqual({ displayName: "Sam", avatarUrl: "" });
      expect(await store.profiles.get(b.accountId, "sam@shop.example")).toBeUndefined();
      const picture = "https://cdn.example/sam.png";
      await store.profiles.set(a.accountId, "sam@shop.example", { displayName: "Sam K.", avatarUrl: picture }, 20);
      expect(await store.profiles.get(a.accountId, "sam@shop.example")).toEqual({
        displayName: "Sam K.",
        avatarUrl: picture,
      });
    });
  });
}
