import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { getJson } from "../helpers/http.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { ACCOUNT_ROUTES, accounts, bolaWorld, CUSTOMERS, emails, matrix, s } from "./bola-fixture.js";
import { dbChecksum } from "./support.js";

// Cross-account access on the account routes (frame tokens: bola.test.ts, in parallel).
bolaWorld();

describe("ID tokens: 2 accounts × 8 conversations", () => {
  it.each(Object.keys(ACCOUNT_ROUTES))("%s: only the owning account", async (name) => {
    const { owned, refused } = await matrix(accounts, name, ACCOUNT_ROUTES[name]!);
    expect(owned).toBe(8);
    expect(refused).toBe(8);
  });

  it("GET /get_contact_conversations: another account's e-mail looks exactly like an unknown one; each sees only its own contacts", async () => {
    for (const p of accounts) {
      for (const email of emails) {
        const r = await getJson(
          s.url,
          "/get_contact_conversations",
          { user_email_id: email },
          { authorization: `Bearer ${p.token}` },
        );
        if (email === p.email) {
          expect(r.status).toBe(200);
          expect(r.body.data.data.contacts.map((c: { user_id: string }) => c.user_id).sort()).toEqual(CUSTOMERS);
        } else {
          const before = dbChecksum(sqliteDb(s.app));
          const unknown = await getJson(
            s.url,
            "/get_contact_conversations",
            { user_email_id: `nobody-${randomUUID()}@example.com` },
            { authorization: `Bearer ${p.token}` },
          );
          expect(r.status).toBe(403);
          expect({ status: r.status, body: r.body }).toEqual({ status: unknown.status, body: unknown.body });
          expect(dbChecksum(sqliteDb(s.app))).toBe(before);
        }
      }
    }
  });
});
