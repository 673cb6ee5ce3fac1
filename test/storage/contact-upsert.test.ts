import { afterEach, describe, expect, it } from "vitest";
import { type StorageFixture, storage } from "./fixture.js";

// A token issue upserts the contact it names. A known contact whose profile the call changes in nothing is not
// written (src/storage/sqlite/repos/contacts.ts): no row rewritten, no page in the log.
let s: StorageFixture;
afterEach(() => s.close());

const changes = () => (s.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
const row = (id: string) =>
  s.db.prepare("SELECT contact_name, email, phone_number, search_text FROM contacts WHERE contact_id = ?").get(id) as {
    contact_name: string;
    email: string;
    phone_number: string;
    search_text: string;
  };

const ANN = { contactName: "Ann Lee", email: "ann@x.example", phoneNumber: "" };
/** A fresh store with one contact, user u1, whose profile is ANN. */
const annLee = () => {
  s = storage();
  const a = s.account();
  return { a, id: s.repos.contacts.upsert(a.accountId, "u1", ANN, 1) };
};

describe("contact upsert", () => {
  it("writes nothing when the profile is empty or as stored, and the same contact is answered", () => {
    const { a, id } = annLee();
    const before = changes();
    expect(s.repos.contacts.upsert(a.accountId, "u1", undefined, 2)).toBe(id);
    expect(s.repos.contacts.upsert(a.accountId, "u1", { contactName: "", email: "", phoneNumber: "" }, 3)).toBe(id);
    expect(s.repos.contacts.upsert(a.accountId, "u1", { ...ANN }, 4)).toBe(id);
    expect(changes()).toBe(before);
  });

  it("still writes a changed field, folds the search text again, and keeps the fields it was not given", () => {
    const { a, id } = annLee();
    const before = changes();
    expect(s.repos.contacts.upsert(a.accountId, "u1", { contactName: "", email: "", phoneNumber: "+1 555" }, 2)).toBe(
      id,
    );
    expect(changes()).toBeGreaterThan(before);
    const r = row(id);
    expect(r).toMatchObject({ contact_name: "Ann Lee", email: "ann@x.example", phone_number: "+1 555" });
    expect(r.search_text).toContain("1 555");
    // A new user of the account is a new contact.
    expect(s.repos.contacts.upsert(a.accountId, "u2", undefined, 3)).not.toBe(id);
  });
});
