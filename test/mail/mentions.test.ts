// @mentions in notes: only the account's people, each notified in their Mentions (read when opened), in the note's
// event, and by e-mail through the outbox where they want it (with one-click unsubscribe); never the customer.
import { describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { waitFor } from "../helpers/time-scale.js";
import { closedAfterEach, header, startMailServer } from "./mail-fixture.js";
import { startSmtpSink } from "./smtp-sink.js";

const live = closedAfterEach();
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe("a mention in a note", () => {
  it("notifies the person mentioned (list, unread, e-mail), refuses another account's member, and reveals nothing to the customer", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    const [a, b] = await Promise.all([s.account(), s.account()]);
    const [owner, otherOwner] = await Promise.all([idToken(s.url, a), idToken(s.url, b)]);
    const bea = await addMember(s.url, owner, `bea-${a.accountId.slice(0, 8)}@shop.example`, "operator");
    const cy = await addMember(s.url, owner, `cy-${a.accountId.slice(0, 8)}@shop.example`, "operator");
    const stranger = await addMember(s.url, otherOwner, `sam-${b.accountId.slice(0, 8)}@other.example`, "operator");
    expect(
      (await postJson(s.url, "/v1/account/profile", { display_name: "Bea", avatar_url: "" }, auth(bea.idToken))).status,
    ).toBe(200);
    // Cy wants no e-mail.
    const off = await postJson(s.url, "/v1/account/mentions/alerts", { email_alerts: false }, auth(cy.idToken));
    expect(off.body).toEqual({ data: { email_alerts: false } });

    const people = await getJson(s.url, "/v1/account/people", {}, auth(cy.idToken));
    expect(people.status).toBe(200);
    expect(people.body.data.people.map((p: { display_name: string }) => p.display_name)).toEqual(
      expect.arrayContaining(["Bea", cy.email.split("@")[0]]),
    );
    expect(people.body.data.people.map((p: { member_id: string }) => p.member_id)).not.toContain(stranger.memberId);

    const customer = await issueTokens(s.url, a, "ann", { email: "ann@customer.example" });
    const { conversation_id } = await send(s.url, customer.access_token, "My parcel is late.");
    // Another account's member: refused naming the field, and no note is stored.
    const refused = await postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id, content: "@Sam look", mention_member_ids: [stranger.memberId] },
      auth(owner),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^mention_member_ids: /);
    const none = await getJson(s.url, "/list_conversation_notes", { conversation_id }, auth(owner));
    expect(none.body.data.notes).toEqual([]);

    const noted = await postJson(
      s.url,
      "/add_conversation_note",
      {
        conversation_id,
        content: "@Bea @Cy can you check the carrier? SECRET-NOTE-42",
        mention_member_ids: [bea.memberId, cy.memberId],
      },
      auth(owner),
    );
    expect(noted.status, JSON.stringify(noted.body)).toBe(200);
    expect(noted.body.data.mentioned_member_ids.sort()).toEqual([bea.memberId, cy.memberId].sort());
    const listed = await getJson(s.url, "/list_conversation_notes", { conversation_id }, auth(cy.idToken));
    expect(listed.body.data.notes[0].mentioned_member_ids.sort()).toEqual([bea.memberId, cy.memberId].sort());

    const beaMentions = await getJson(s.url, "/v1/account/mentions", {}, auth(bea.idToken));
    expect(beaMentions.body.data).toMatchObject({ unread: 1, email_alerts: true });
    expect(beaMentions.body.data.mentions[0]).toMatchObject({
      note_id: noted.body.data.note_id,
      conversation_id,
      content: "@Bea @Cy can you check the carrier? SECRET-NOTE-42",
      read: false,
    });
    // Nobody else's list holds it; another account's person sees nothing.
    expect((await getJson(s.url, "/v1/account/mentions", {}, auth(owner))).body.data.mentions).toEqual([]);
    expect((await getJson(s.url, "/v1/account/mentions", {}, auth(otherOwner))).body.data.mentions).toEqual([]);
    // Marking another person's mention read changes nothing of Bea's.
    const wrong = await postJson(
      s.url,
      "/v1/account/mentions/read",
      { note_ids: [noted.body.data.note_id] },
      auth(otherOwner),
    );
    expect(wrong.body).toEqual({ data: { marked: 0 } });
    const read = await postJson(
      s.url,
      "/v1/account/mentions/read",
      { note_ids: [noted.body.data.note_id] },
      auth(bea.idToken),
    );
    expect(read.body).toEqual({ data: { marked: 1 } });
    const after = await getJson(s.url, "/v1/account/mentions", {}, auth(bea.idToken));
    expect(after.body.data).toMatchObject({ unread: 0 });
    expect(after.body.data.mentions[0].read).toBe(true);
    expect((await getJson(s.url, "/v1/account/mentions", {}, auth(cy.idToken))).body.data.unread).toBe(1);

    // The e-mail: to Bea only (Cy turned it off), multipart, with one-click unsubscribe; never to the customer.
    const mentionMails = () => live.sink!.received.filter((m) => m.parsed.subject?.includes("mentioned you"));
    await s.app.mailSender!.drain();
    await waitFor("Bea's mention mail arrives", () => mentionMails().length >= 1);
    await s.app.mailSender!.drain();
    expect(mentionMails().flatMap((m) => m.to)).toEqual([bea.email]);
    const m = mentionMails()[0]!;
    expect(m.parsed.subject).toMatch(/mentioned you in a note$/);
    expect(m.parsed.text).toContain("SECRET-NOTE-42");
    expect(m.parsed.text).toContain("/console/mentions");
    expect(header(m, "list-unsubscribe")).toMatch(/^<http/);
    // The customer's own reads never hold the note.
    const page = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id,
      access_token: customer.access_token,
    });
    expect(JSON.stringify(page.body)).not.toContain("SECRET-NOTE-42");
  });
});
