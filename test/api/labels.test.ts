import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";

// Issue 45, labels: account-wide, created, renamed and deleted by admins, put on conversations by everyone; a change
// is a line of the timeline and a conversation.activity event; the search filters by label; another account's
// labels and conversations are out of reach. Runs on SQLite and on PostgreSQL (ON_POSTGRES).

const fx = serverForFile({ accounts: 2, idTokens: true });
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe("labels", () => {
  it("admins manage them, everyone applies them, the timeline and the event log say so, the search filters by them", async () => {
    const { s, authA } = fx;
    const refund = await postJson(s.url, "/v1/account/labels", { name: "Refund" }, authA);
    expect(refund.status).toBe(200);
    const vip = await postJson(s.url, "/v1/account/labels", { name: "VIP" }, authA);
    const refundId = refund.body.data.label_id as string;
    const vipId = vip.body.data.label_id as string;
    // A name is unique in the account, case and accents aside.
    expect((await postJson(s.url, "/v1/account/labels", { name: "réfund" }, authA)).status).toBe(409);
    expect((await postJson(s.url, "/v1/account/labels", { name: "" }, authA)).status).toBe(400);

    const operator = await addMember(s.url, fx.idA, "labels-op@shop.example");
    // Operators list and apply labels, and do not manage them.
    expect((await postJson(s.url, "/v1/account/labels", { name: "Nope" }, bearer(operator.idToken))).status).toBe(403);
    const listed = await getJson(s.url, "/v1/account/labels", {}, bearer(operator.idToken));
    expect(listed.body.data.labels.map((l: { name: string }) => l.name)).toEqual(["Refund", "VIP"]);

    const t = await issueTokens(s.url, fx.a, "labeled-customer");
    const { conversation_id } = await send(s.url, t.access_token, "I want my money back for order 42");
    const other = await issueTokens(s.url, fx.a, "unlabeled-customer");
    await send(s.url, other.access_token, "money questions for order 43");

    const set = await postJson(
      s.url,
      "/set_conversation_labels",
      { conversation_id, label_ids: [refundId, vipId] },
      bearer(operator.idToken),
    );
    expect(set.status).toBe(200);
    expect([...set.body.data.label_ids].sort()).toEqual([refundId, vipId].sort());
    await postJson(s.url, "/set_conversation_labels", { conversation_id, label_ids: [refundId] }, authA);
    // The same set again changes nothing and says nothing.
    await postJson(s.url, "/set_conversation_labels", { conversation_id, label_ids: [refundId] }, authA);
    const now = await getJson(s.url, "/list_conversation_labels", { conversation_id }, authA);
    expect(now.body.data.label_ids).toEqual([refundId]);

    const timeline = await getJson(s.url, "/list_conversation_activity", { conversation_id }, authA);
    const lines = timeline.body.data.activities.filter((a: { kind: string }) => a.kind === "labeled");
    expect(lines.map((l: { detail: string; actor_email: string }) => [l.detail, l.actor_email])).toEqual([
      ["+Refund, +VIP", "labels-op@shop.example"],
      ["-VIP", fx.a.email],
    ]);
    const log = await getJson(s.url, "/v1/account/events", { types: "conversation.activity" }, authA);
    const events = log.body.data.events.filter((e: any) => e.data.activity.kind === "labeled");
    expect(events.map((e: any) => e.data.activity.detail)).toEqual(["+Refund, +VIP", "-VIP"]);

    // The search by label: only the labeled conversation's words.
    const all = await getJson(s.url, "/search_conversations", { query: "money" }, authA);
    expect(new Set(all.body.data.results.map((r: any) => r.conversation_id)).size).toBe(2);
    const byLabel = await getJson(s.url, "/search_conversations", { query: "money", label_id: refundId }, authA);
    expect(byLabel.body.data.results.map((r: any) => r.conversation_id)).toEqual([conversation_id]);
    const byVip = await getJson(s.url, "/search_conversations", { query: "money", label_id: vipId }, authA);
    expect(byVip.body.data.results).toEqual([]);

    // Priority: none until set; a change is a prioritized line and shows in the contact list (read twice before, so
    // a remembered page would answer); a bad value is refused naming it.
    expect(now.body.data.priority).toBe("none");
    const priorities = async () =>
      Object.fromEntries(
        (
          await getJson(s.url, "/get_contact_conversations", { user_email_id: fx.a.email }, authA)
        ).body.data.data.contacts.map((c: any) => [c.latest_conversation_id, c.priority]),
      );
    expect((await priorities())[conversation_id]).toBe("none");
    expect(Object.values(await priorities())).toEqual(["none", "none"]);
    const urgent = await postJson(s.url, "/set_conversation_priority", { conversation_id, priority: "urgent" }, authA);
    expect(urgent.status).toBe(200);
    expect(urgent.body.data).toMatchObject({ conversation_id, priority: "urgent" });
    await postJson(s.url, "/set_conversation_priority", { conversation_id, priority: "urgent" }, authA);
    const bad = await postJson(s.url, "/set_conversation_priority", { conversation_id, priority: "asap" }, authA);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("priority");
    const after = await getJson(s.url, "/list_conversation_activity", { conversation_id }, authA);
    expect(
      after.body.data.activities.filter((a: { kind: string }) => a.kind === "prioritized").map((a: any) => a.detail),
    ).toEqual(["none → urgent"]);
    expect((await getJson(s.url, "/list_conversation_labels", { conversation_id }, authA)).body.data.priority).toBe(
      "urgent",
    );
    expect(Object.values(await priorities()).sort()).toEqual(["none", "urgent"]);
    expect((await priorities())[conversation_id]).toBe("urgent");

    // Renamed: the conversation keeps it; deleted: it is off every conversation.
    const renamed = await requestJson(s.url, "PATCH", `/v1/account/labels/${refundId}`, authA, { name: "Refunds" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.name).toBe("Refunds");
    expect((await requestJson(s.url, "PATCH", `/v1/account/labels/${vipId}`, authA, { name: "refunds" })).status).toBe(
      409,
    );
    expect((await requestJson(s.url, "DELETE", `/v1/account/labels/${refundId}`, authA)).status).toBe(200);
    expect((await getJson(s.url, "/list_conversation_labels", { conversation_id }, authA)).body.data.label_ids).toEqual(
      [],
    );
    expect((await requestJson(s.url, "DELETE", `/v1/account/labels/${refundId}`, authA)).status).toBe(404);

    // Erasing the customer takes the labeled conversation with its labels; the label stays the account's.
    await postJson(s.url, "/set_conversation_labels", { conversation_id, label_ids: [vipId] }, authA);
    const contactId = byLabel.body.data.results[0].contact_id;
    expect((await postJson(s.url, "/v1/account/contacts/erase", { contact_id: contactId }, authA)).status).toBe(200);
    expect((await getJson(s.url, "/list_conversation_labels", { conversation_id }, authA)).status).toBe(404);
    const left = await getJson(s.url, "/v1/account/labels", {}, authA);
    expect(left.body.data.labels.map((l: { name: string }) => l.name)).toContain("VIP");
  });

  it("another account's labels and conversations are out of reach", async () => {
    const { s, authA, authB } = fx;
    const mine = (await postJson(s.url, "/v1/account/labels", { name: "Mine" }, authA)).body.data.label_id;
    const theirs = (await postJson(s.url, "/v1/account/labels", { name: "Theirs" }, authB)).body.data.label_id;
    const ta = await issueTokens(s.url, fx.a, "cross-a");
    const a = (await send(s.url, ta.access_token, "hello")).conversation_id;
    const tb = await issueTokens(s.url, fx.b, "cross-b");
    const b = (await send(s.url, tb.access_token, "hello")).conversation_id;

    // B's label on A's conversation, A's label on B's conversation: refused, nothing changes.
    const wrongLabel = await postJson(
      s.url,
      "/set_conversation_labels",
      { conversation_id: a, label_ids: [theirs] },
      authA,
    );
    expect(wrongLabel.status).toBe(404);
    expect(wrongLabel.body.message).toBe("label not found");
    expect(
      (await postJson(s.url, "/set_conversation_labels", { conversation_id: b, label_ids: [mine] }, authA)).status,
    ).toBe(404);
    expect((await getJson(s.url, "/list_conversation_labels", { conversation_id: b }, authA)).status).toBe(404);
    const high = { conversation_id: b, priority: "high" };
    expect((await postJson(s.url, "/set_conversation_priority", high, authA)).status).toBe(404);
    expect((await requestJson(s.url, "PATCH", `/v1/account/labels/${theirs}`, authA, { name: "pwned" })).status).toBe(
      404,
    );
    expect((await requestJson(s.url, "DELETE", `/v1/account/labels/${theirs}`, authA)).status).toBe(404);
    const listB = await getJson(s.url, "/v1/account/labels", {}, authB);
    expect(listB.body.data.labels.map((l: { name: string }) => l.name)).toEqual(["Theirs"]);
    expect(
      (await getJson(s.url, "/list_conversation_labels", { conversation_id: b }, authB)).body.data.label_ids,
    ).toEqual([]);
  });
});
