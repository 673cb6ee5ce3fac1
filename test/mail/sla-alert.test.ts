// Issue 46's SLA alert: a breach e-mails the person who holds the conversation (or the admins of an unassigned one),
// where they want it (their Profile's choice, on by default), through the outbox with one-click unsubscribe, once.
import { describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson, requestJson } from "../helpers/http.js";
import { closedAfterEach, header, startMailServer } from "./mail-fixture.js";
import { startSmtpSink } from "./smtp-sink.js";

const live = closedAfterEach();
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("the SLA alert", () => {
  it("reaches the holder and, for an unassigned conversation, the admins who want it; once", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    const a = await s.account();
    const owner = bearer(await idToken(s.url, a));
    await requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}`, owner, { first_response_sla_minutes: 1 });
    const holder = await addMember(s.url, await idToken(s.url, a), "holder@shop.example");
    const quiet = await addMember(s.url, await idToken(s.url, a), "quiet-admin@shop.example", "admin");
    // The quiet admin turned the alert off in their Profile.
    await postJson(s.url, "/v1/account/alerts", { sla_breach_email: false }, bearer(quiet.idToken));

    const held = await send(s.url, (await issueTokens(s.url, a, "held-customer")).access_token, "Hello?");
    await postJson(s.url, "/take_over_conversation", { conversation_id: held.conversation_id }, bearer(holder.idToken));
    // An unassigned one: the agent hands it over (here, a person takes it and releases it to the agent).
    const loose = await send(s.url, (await issueTokens(s.url, a, "loose-customer")).access_token, "Anyone?");
    await postJson(s.url, "/take_over_conversation", { conversation_id: loose.conversation_id }, owner);
    await postJson(s.url, "/release_conversation", { conversation_id: loose.conversation_id }, owner);

    s.clock.advance(2 * 60_000);
    await Promise.all([s.app.timers.check(), s.app.timers.check()]);
    await s.app.mailSender!.drain();
    const alerts = live.sink.received.filter(
      (m) => m.parsed.subject === "A conversation missed its first-response time",
    );
    expect(alerts.map((m) => m.to[0]).sort()).toEqual([a.email.toLowerCase(), "holder@shop.example"].sort());
    const toHolder = alerts.find((m) => m.to[0] === "holder@shop.example")!;
    expect(toHolder.parsed.text).toContain("A conversation you hold");
    expect(toHolder.parsed.html).toContain("/console/inbox");
    expect(header(toHolder, "list-unsubscribe")).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/mail\/unsubscribe\/us_/);
    // A second check sends nothing more.
    await s.app.timers.check();
    await s.app.mailSender!.drain();
    expect(live.sink.received.filter((m) => m.parsed.subject === alerts[0]!.parsed.subject)).toHaveLength(2);
  });
});
