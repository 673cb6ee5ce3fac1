import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, contacts, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";

// Issue 45: snooze until a time (it leaves the open views, comes back when its time passes or the customer writes,
// once), and a first-response SLA per chatbot (its clock starts when the conversation goes to the team; a breach is a
// timeline line, a conversation.sla_breached event, and counted in the report). The test clock moves; the periodic
// check is run at once (app.timers.check). Runs on SQLite and on PostgreSQL (ON_POSTGRES).

const fx = serverForFile({ accounts: 2, idTokens: true });
const HOUR = 3_600_000;
const iso = (t: number) => new Date(t).toISOString();
const kinds = async (conversation_id: string, kind: string) =>
  (await getJson(fx.s.url, "/list_conversation_activity", { conversation_id }, fx.authA)).body.data.activities
    .filter((a: { kind: string }) => a.kind === kind)
    .map((a: { detail: string }) => a.detail);
/** The clock moved past the tokens' lifetime: the account's ID tokens again. */
async function later(ms: number) {
  fx.s.clock.advance(ms);
  fx.idA = await idToken(fx.s.url, fx.a);
  fx.idB = await idToken(fx.s.url, fx.b);
  fx.authA = { authorization: `Bearer ${fx.idA}` };
  fx.authB = { authorization: `Bearer ${fx.idB}` };
}
const listed = async (filter: string, extra: Record<string, string> = {}) =>
  (await contacts(fx.s.url, fx.idA, fx.a.email, { filter, ...extra })).body.data.data.contacts as {
    latest_conversation_id: string;
    snoozed_until: string;
    first_response_status: string;
    first_response_due_at: string;
  }[];

describe("snooze", () => {
  it("snoozed until a time: out of the live view, back when its time passes or the customer writes, once", async () => {
    const { s, authA } = fx;
    const t = await issueTokens(s.url, fx.a, "snoozing-customer");
    const { conversation_id } = await send(s.url, t.access_token, "I will send the photos tomorrow");
    const until = s.clock.now() + HOUR;

    // Bad input names the field and changes nothing.
    for (const bad of ["tomorrow", iso(s.clock.now() - 1000), iso(s.clock.now() + 400 * 24 * HOUR)]) {
      const r = await postJson(s.url, "/snooze_conversation", { conversation_id, snoozed_until: bad }, authA);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain("snoozed_until");
    }
    expect((await listed("snoozed")).map((c) => c.latest_conversation_id)).not.toContain(conversation_id);

    const r = await postJson(s.url, "/snooze_conversation", { conversation_id, snoozed_until: iso(until) }, authA);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ conversation_id, snoozed_until: iso(until) });
    expect((await listed("live")).map((c) => c.latest_conversation_id)).not.toContain(conversation_id);
    expect((await listed("unread")).map((c) => c.latest_conversation_id)).not.toContain(conversation_id);
    const asleep = (await listed("snoozed")).find((c) => c.latest_conversation_id === conversation_id);
    expect(asleep?.snoozed_until).toBe(iso(until));
    expect(await kinds(conversation_id, "snoozed")).toEqual([iso(until)]);

    // Not yet: nothing wakes. Then the time passes: two checks at once wake it once.
    await s.app.timers.check();
    expect((await listed("snoozed")).map((c) => c.latest_conversation_id)).toContain(conversation_id);
    await later(HOUR + 1000);
    const authA2 = fx.authA;
    await Promise.all([s.app.timers.check(), s.app.timers.check()]);
    expect((await listed("live")).map((c) => c.latest_conversation_id)).toContain(conversation_id);
    expect(await kinds(conversation_id, "unsnoozed")).toEqual(["time"]);
    const log = await getJson(s.url, "/v1/account/events", { types: "conversation.activity" }, authA2);
    expect(
      log.body.data.events
        .map((e: any) => e.data.activity)
        .filter((a: any) => a.conversation_id === conversation_id && a.kind.includes("snoozed"))
        .map((a: any) => a.kind),
    ).toEqual(["snoozed", "unsnoozed"]);

    // Snoozed again, the customer writes: it comes back at once.
    const tomorrow = s.clock.now() + 24 * HOUR;
    await postJson(s.url, "/snooze_conversation", { conversation_id, snoozed_until: iso(tomorrow) }, authA2);
    const t2 = await issueTokens(s.url, fx.a, "snoozing-customer");
    await send(s.url, t2.access_token, "Here are the photos", conversation_id);
    expect(await kinds(conversation_id, "unsnoozed")).toEqual(["time", "customer"]);
    const labels = await getJson(s.url, "/list_conversation_labels", { conversation_id }, authA2);
    expect(labels.body.data.snoozed_until).toBe("");
    // An empty time wakes it by hand.
    await postJson(s.url, "/snooze_conversation", { conversation_id, snoozed_until: iso(tomorrow) }, authA2);
    await postJson(s.url, "/snooze_conversation", { conversation_id, snoozed_until: "" }, authA2);
    expect(await kinds(conversation_id, "unsnoozed")).toEqual(["time", "customer", "person"]);

    // Another account's conversation is not found.
    const tb = await issueTokens(s.url, fx.b, "their-customer");
    const theirs = await send(s.url, tb.access_token, "hello");
    const other = await postJson(
      s.url,
      "/snooze_conversation",
      { conversation_id: theirs.conversation_id, snoozed_until: iso(tomorrow) },
      authA2,
    );
    expect(other.status).toBe(404);
  });

  it("the list filters by label", async () => {
    const { s, authA } = fx;
    const label = await postJson(s.url, "/v1/account/labels", { name: "Returns" }, authA);
    const labelId = label.body.data.label_id as string;
    const t1 = await issueTokens(s.url, fx.a, "returning-customer");
    const one = await send(s.url, t1.access_token, "I want to return it");
    const t2 = await issueTokens(s.url, fx.a, "staying-customer");
    const two = await send(s.url, t2.access_token, "I love it");
    await postJson(
      s.url,
      "/set_conversation_labels",
      { conversation_id: one.conversation_id, label_ids: [labelId] },
      authA,
    );
    const ids = (await listed("all", { label_id: labelId })).map((c) => c.latest_conversation_id);
    expect(ids).toEqual([one.conversation_id]);
    expect(ids).not.toContain(two.conversation_id);
    const bad = await contacts(s.url, fx.idA, fx.a.email, { label_id: "not-a-uuid" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("label_id");
    // Another account filtering by this label finds nothing of this account.
    const theirs = await contacts(s.url, fx.idB, fx.b.email, { label_id: labelId });
    expect(theirs.body.data.data.contacts).toEqual([]);
  });
});

describe("first-response SLA", () => {
  it("a chatbot's SLA: the clock starts when the team gets it; met, breached once, in the event log and the report", async () => {
    const { s, authA } = fx;
    const bot = `/v1/account/chatbots/${fx.a.chatbotId}`;
    const bad = await requestJson(s.url, "PATCH", bot, authA, { first_response_sla_minutes: -1 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("first_response_sla_minutes");
    const set = await requestJson(s.url, "PATCH", bot, authA, { first_response_sla_minutes: 5 });
    expect(set.status).toBe(200);
    expect(set.body.data.first_response_sla_minutes).toBe(5);

    const operator = await addMember(s.url, fx.idA, "sla-op@shop.example");
    const op = { authorization: `Bearer ${operator.idToken}` };
    // The report counts conversations by the day they began; the clock moves past midnight when the run does.
    const opened = s.clock.now();
    const t1 = await issueTokens(s.url, fx.a, "sla-waiting");
    const late = await send(s.url, t1.access_token, "Where is my parcel?");
    const t2 = await issueTokens(s.url, fx.a, "sla-answered");
    const quick = await send(s.url, t2.access_token, "Can I change my address?");
    // The agent answering alone runs no clock.
    expect((await listed("all")).find((c) => c.latest_conversation_id === late.conversation_id)).toMatchObject({
      first_response_status: "none",
      first_response_due_at: "",
    });

    const start = s.clock.now();
    for (const id of [late.conversation_id, quick.conversation_id])
      expect((await postJson(s.url, "/take_over_conversation", { conversation_id: id }, op)).status).toBe(200);
    const pending = (await listed("all")).find((c) => c.latest_conversation_id === late.conversation_id)!;
    expect(pending.first_response_status).toBe("pending");
    const due = Date.parse(pending.first_response_due_at);
    expect(due - start).toBeGreaterThanOrEqual(5 * 60_000);
    expect(due - start).toBeLessThan(6 * 60_000);

    await postJson(
      s.url,
      "/reply_to_conversation",
      { conversation_id: quick.conversation_id, content: "Yes, tell me the new one" },
      op,
    );
    const met = await getJson(s.url, "/list_conversation_labels", { conversation_id: quick.conversation_id }, authA);
    expect(met.body.data.first_response_status).toBe("met");

    await later(6 * 60_000);
    const owner = fx.authA;
    await Promise.all([s.app.timers.check(), s.app.timers.check()]);
    const breached = await getJson(
      s.url,
      "/list_conversation_labels",
      { conversation_id: late.conversation_id },
      owner,
    );
    expect(breached.body.data.first_response_status).toBe("breached");
    expect(await kinds(late.conversation_id, "sla_breached")).toEqual([iso(due)]);
    expect(await kinds(quick.conversation_id, "sla_breached")).toEqual([]);
    const events = await getJson(s.url, "/v1/account/events", { types: "conversation.sla_breached" }, owner);
    expect(events.body.data.events.map((e: any) => [e.data.conversation_id, e.data.chatbot_id])).toEqual([
      [late.conversation_id, fx.a.chatbotId],
    ]);
    const op2 = {
      authorization: `Bearer ${(await postJson(s.url, "/get_id_token", { user_email_id: operator.email, password: operator.password })).body.data.idToken}`,
    };
    // A reply after the breach leaves it breached; a take-over again starts no second clock.
    await postJson(s.url, "/reply_to_conversation", { conversation_id: late.conversation_id, content: "Sorry!" }, op2);
    await s.app.timers.check();
    expect(await kinds(late.conversation_id, "sla_breached")).toHaveLength(1);

    const report = await getJson(
      s.url,
      "/v1/account/reports",
      { chatbot_id: fx.a.chatbotId, from: iso(opened).slice(0, 10), to: iso(s.clock.now()).slice(0, 10) },
      owner,
    );
    expect(report.body.data).toMatchObject({ sla_hits: 1, sla_breaches: 1 });

    // The alert setting: on by default, off when the person says so, kept per person.
    const me = await getJson(s.url, "/v1/account", {}, op2);
    expect(me.body.data.caller_sla_breach_email).toBe(true);
    const off = await postJson(s.url, "/v1/account/alerts", { sla_breach_email: false }, op2);
    expect(off.status).toBe(200);
    expect(off.body.data.caller_sla_breach_email).toBe(false);
    expect((await getJson(s.url, "/v1/account", {}, owner)).body.data.caller_sla_breach_email).toBe(true);
    const bad2 = await postJson(s.url, "/v1/account/alerts", { sla_breach_email: "maybe" }, op2);
    expect(bad2.status).toBe(400);
  });
});
