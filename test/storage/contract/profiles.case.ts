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

    it("keeps an uploaded picture beside the profile, finds it by id, replaces and removes it", async () => {
      const { store } = h();
      const a = await account(store);
      const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
      const pic = { pictureId: "a".repeat(32), contentType: "image/png" as const, bytes };
      expect(await store.pictures.pictureIdOf(a.accountId, "pat@shop.example")).toBeUndefined();
      await store.profiles.set(a.accountId, "pat@shop.example", { displayName: "Pat", avatarUrl: "" }, 10);
      await store.pictures.setPicture(a.accountId, "Pat@Shop.example", pic, 20);
      expect(await store.pictures.pictureIdOf(a.accountId, "pat@shop.example")).toBe(pic.pictureId);
      const got = await store.pictures.picture(pic.pictureId);
      expect(got && { ...got, bytes: [...got.bytes] }).toEqual({ ...pic, bytes: [...bytes] });
      // The name stays as it was.
      expect((await store.profiles.get(a.accountId, "pat@shop.example"))?.displayName).toBe("Pat");
      await store.pictures.setPicture(a.accountId, "pat@shop.example", undefined, 30);
      expect(await store.pictures.picture(pic.pictureId)).toBeUndefined();
      expect(await store.pictures.pictureIdOf(a.accountId, "pat@shop.example")).toBeUndefined();
    });
  });
}
