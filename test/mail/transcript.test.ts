// The customer's own address (left in the frame) and transcripts, through the relay on loopback; who may ask for
// them (the cross-account table), and the account's outbox for its admins.
import { randomUUID } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { MailService } from "../../gen/aiagent/v1/mail_service_pb.js";
import { addMember, idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { transport } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";
import { closedAfterEach, due, header, operatorMail, startMailServer } from "./mail-fixture.js";
import { startSmtpSink } from "./smtp-sink.js";

const live = closedAfterEach();

const asCustomer = (token: string) => `?access_token=${encodeURIComponent(token)}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const transcripts = () => live.sink!.received.filter((m) => m.parsed.subject?.startsWith("Your conversation"));
const transcriptFromFrame = (s: TestServer, token: string, conversationId: string) =>
  postJson(s.url, `/send_transcript${asCustomer(token)}`, { conversation_id: conversationId });

describe("the address the customer leaves in the frame", () => {
  it("is checked, stored on their own contact only, and the operator's later answer is mailed to it", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    const a = await s.account();
    const t = await issueTokens(s.url, a, "ann");
    const sent = await send(s.url, t.access_token, "Is anyone there?");
    // Another account's customer with the same user id keeps its own contact.
    const b = await s.account();
    await issueTokens(s.url, b, "ann", { email: "ann@other.example" });

    expect((await getJson(s.url, "/ai_agent/contact", { access_token: t.access_token })).body).toEqual({
      data: { email: "" },
    });
    for (const bad of ["not an address", "ann@", "ann@localhost", "a@b@c.example"]) {
      const r = await postJson(s.url, `/ai_agent/contact/email${asCustomer(t.access_token)}`, { email: bad });
      expect(r.status, bad).toBe(400);
      expect(r.body.message, bad).toMatch(/^email: /);
    }
    const missing = await postJson(s.url, `/ai_agent/contact/email${asCustomer(t.access_token)}`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toBe("email: is required");
    expect((await s.app.store.privacy.contact(a.accountId, { userId: "ann" }))!.email).toBe("");

    const ok = await postJson(s.url, `/ai_agent/contact/email${asCustomer(t.access_token)}`, {
      email: "Ann@Customer.example",
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ data: { email: "Ann@Customer.example" } });
    expect((await getJson(s.url, "/ai_agent/contact", { access_token: t.access_token })).body.data.email).toBe(
      "Ann@Customer.example",
    );
    expect((await s.app.store.privacy.contact(b.accountId, { userId: "ann" }))!.email).toBe("ann@other.example");

    // The operator answers later; the customer is away: the answer is mailed to the address left.
    await s.app.conversations.actions.reply(ownerOf(a), sent.conversation_id, "It ships tomorrow, sorry for the wait.");
    await s.app.offlineReplies!.idle();
    await due(s);
    await waitFor("the operator's answer arrives", () => operatorMail(live.sink!.received).length === 1);
    expect(operatorMail(live.sink.received)[0]!.to).toEqual(["ann@customer.example"]);
    expect(live.sink.received.flatMap((m) => m.to)).not.toContain("ann@other.example");
  });
});

describe("a transcript", () => {
  it("arrives from the frame and from the console: multipart, authors and times, never a note", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    const a = await s.account();
    const t = await issueTokens(s.url, a, "bea", { email: "bea@customer.example", contact_name: "Bea Customer" });
    // The messages are written between these two instants: their minute is either one's (a run may cross a minute).
    const before = s.clock.now();
    const sent = await send(s.url, t.access_token, "My parcel arrived damaged.");
    const conversationId = sent.conversation_id;
    await s.app.conversations.actions.takeOver(ownerOf(a), conversationId, a.email, "Dana");
    await s.app.conversations.actions.reply(ownerOf(a), conversationId, "I am sorry! A new one is on its way.");
    const admin = await idToken(s.url, a);
    const note = await postJson(
      s.url,
      "/add_conversation_note",
      { conversation_id: conversationId, content: "INTERNAL: refund approved by finance" },
      bearer(admin),
    );
    expect(note.status).toBe(200);

    const fromFrame = await transcriptFromFrame(s, t.access_token, conversationId);
    expect(fromFrame.status).toBe(200);
    expect(fromFrame.body.data).toMatchObject({ recipient: "bea@customer.example" });
    const fromConsole = await postJson(s.url, "/send_transcript", { conversation_id: conversationId }, bearer(admin));
    expect(fromConsole.status).toBe(200);
    await s.app.mailSender!.drain();
    await waitFor("both transcripts arrive", () => transcripts().length === 2);
    for (const m of transcripts()) {
      expect(m.to).toEqual(["bea@customer.example"]);
      expect(m.parsed.subject).toBe("Your conversation with Test bot");
      expect(m.parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
      const text = m.parsed.text ?? "";
      const minute = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });
      const whens = [minute.format(new Date(before)), minute.format(new Date(s.clock.now()))];
      const written = (line: string) => whens.some((when) => text.includes(line.replace("WHEN", when)));
      expect(written("Bea Customer · WHEN (UTC)\nMy parcel arrived damaged."), text).toBe(true);
      expect(written("Dana · WHEN (UTC)\nI am sorry! A new one is on its way."), text).toBe(true);
      expect(text).toMatch(/Test bot · .*\n/);
      expect(m.parsed.html).toContain("<strong>Dana</strong>");
      expect(m.parsed.html).toContain("My parcel arrived damaged.");
      for (const part of [m.raw, text, m.parsed.html || ""]) expect(part).not.toContain("refund approved");
    }
  });

  it("is written in the customer's language: its words, its dates (Intl) and its footer; a language not spoken is refused", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    const a = await s.account();
    const t = await issueTokens(s.url, a, "gus", { email: "gus@customer.example" });
    const { conversation_id } = await send(s.url, t.access_token, "Mein Paket ist beschädigt.");
    const bad = await postJson(s.url, `/send_transcript${asCustomer(t.access_token)}`, {
      conversation_id,
      locale: "xx",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^locale: /);
    for (const locale of ["de", "ar"]) {
      const r = await postJson(s.url, `/send_transcript${asCustomer(t.access_token)}`, { conversation_id, locale });
      expect(r.status, locale).toBe(200);
    }
    await s.app.mailSender!.drain();
    const arrived = () => live.sink!.received.filter((m) => m.to.includes("gus@customer.example"));
    await waitFor("both transcripts arrive", () => arrived().length === 2);
    const german = arrived().find((m) => m.parsed.subject === "Ihr Gespräch mit Test bot")!;
    const arabic = arrived().find((m) => m.parsed.subject === "محادثتك مع Test bot")!;
    const when = (locale: string) =>
      new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(
        new Date(s.clock.now()),
      );
    expect(german.parsed.text).toContain(`Ihr Gespräch mit Test bot, begonnen am ${when("de")} (UTC).`);
    expect(german.parsed.text).toContain(`Sie · ${when("de")} (UTC)\nMein Paket ist beschädigt.`);
    expect(german.parsed.text).toContain("Um keine E-Mails mehr von uns zu erhalten:");
    expect(german.parsed.html).toContain('lang="de" dir="ltr"');
    expect(arabic.parsed.html).toContain('lang="ar" dir="rtl"');
    expect(arabic.parsed.text).toContain(when("ar"));
    expect(header(arabic, "list-unsubscribe")).toMatch(/^<http/);
  });

  it("is limited per conversation (configurable), and refused without an address or a relay", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port, { AIAGENT_MAIL_TRANSCRIPTS_PER_HOUR: "2" }));
    const a = await s.account();
    const t = await issueTokens(s.url, a, "cy", { email: "cy@customer.example" });
    const { conversation_id } = await send(s.url, t.access_token, "Hello");
    expect((await transcriptFromFrame(s, t.access_token, conversation_id)).status).toBe(200);
    const admin = await idToken(s.url, a);
    expect((await postJson(s.url, "/send_transcript", { conversation_id }, bearer(admin))).status).toBe(200);
    const third = await transcriptFromFrame(s, t.access_token, conversation_id);
    expect(third.status).toBe(429);
    expect(third.body.message).toMatch(/at most 2 transcripts an hour per conversation/);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    await s.app.mailSender!.drain();
    await waitFor("the two transcripts arrive", () => transcripts().length === 2);

    // A customer with no address: refused, naming what is missing.
    const t2 = await issueTokens(s.url, a, "dee");
    const other = await send(s.url, t2.access_token, "Hi");
    const none = await transcriptFromFrame(s, t2.access_token, other.conversation_id);
    expect(none.status).toBe(400);
    expect(none.body.message).toMatch(/no e-mail address/);
  });

  it("without a relay, answers so, and queues nothing", async () => {
    const s = (live.server = await startServer());
    const a = await s.account();
    const t = await issueTokens(s.url, a, "eve", { email: "eve@customer.example" });
    const { conversation_id } = await send(s.url, t.access_token, "Hello");
    const r = await transcriptFromFrame(s, t.access_token, conversation_id);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/no SMTP relay/);
    const status = await getJson(s.url, "/v1/account/mail", {}, bearer(await idToken(s.url, a)));
    expect(status.body).toEqual({
      data: { relay_configured: false, pending: 0, failed: 0, last_error: "", last_error_at: "" },
    });
  });
});

describe("who may ask for a transcript: 2 accounts × 2 customers with the same user ids", () => {
  it("only the conversation's customer and its account's people; others get what a random id gets, and nothing is queued", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port, { AIAGENT_MAIL_TRANSCRIPTS_PER_HOUR: "0" }));
    const world: { a: TestAccount; admin: string; frames: { token: string; conv: string }[] }[] = [];
    for (let i = 0; i < 2; i++) {
      const a = await s.account();
      const frames = [];
      for (const user of ["alice", "bob"]) {
        const t = await issueTokens(s.url, a, user, { email: `${user}${i}@customer.example` });
        frames.push({
          token: t.access_token,
          conv: (await send(s.url, t.access_token, `hi from ${user}`)).conversation_id,
        });
      }
      world.push({ a, admin: await idToken(s.url, a), frames });
    }
    await s.app.offlineReplies!.idle();
    // The agents' answers wait as reply mails (customers who left): the count moves only with a transcript.
    const queued = async () => {
      let n = 0;
      for (const w of world) n += (await s.app.store.mail.counts(w.a.accountId)).pending;
      return n;
    };
    const conversations = world.flatMap((w, i) => w.frames.map((f) => ({ account: i, conv: f.conv })));
    const rpc = (token: string, conversationId: string) =>
      createClient(MailService, transport(s.url, "connect-json"))
        .sendTranscript({ conversationId }, { headers: bearer(token) })
        .then(
          () => 200,
          (e: unknown) => ConnectError.from(e).code,
        );
    const doors = {
      frame: (token: string, id: string) => transcriptFromFrame(s, token, id),
      console: (token: string, id: string) =>
        postJson(s.url, "/send_transcript", { conversation_id: id }, bearer(token)),
    };
    let refused = 0;
    for (const [i, w] of world.entries()) {
      const principals = [
        ...w.frames.map((f) => ({
          door: doors.frame,
          token: f.token,
          owns: (c: { conv: string }) => c.conv === f.conv,
        })),
        { door: doors.console, token: w.admin, owns: (c: { account: number }) => c.account === i },
      ];
      for (const p of principals)
        for (const c of conversations) {
          if (p.owns(c)) continue;
          const before = await queued();
          const forbidden = await p.door(p.token, c.conv);
          const random = await p.door(p.token, randomUUID());
          expect(forbidden.status).toBe(404);
          expect(forbidden.body).toEqual(random.body);
          expect(await rpc(p.token, c.conv)).toBe(Code.NotFound);
          expect(await queued()).toBe(before);
          refused++;
        }
    }
    expect(refused).toBe(2 * (2 * 3 + 2));
    // Each owner succeeds, to its own customer's address.
    expect((await doors.frame(world[0]!.frames[1]!.token, world[0]!.frames[1]!.conv)).body.data.recipient).toBe(
      "bob0@customer.example",
    );
    expect(await rpc(world[1]!.admin, world[1]!.frames[0]!.conv)).toBe(200);
    await s.app.mailSender!.drain();
    await waitFor("the two transcripts arrive", () => transcripts().length === 2);
    expect(
      transcripts()
        .flatMap((m) => m.to)
        .sort(),
    ).toEqual(["alice1@customer.example", "bob0@customer.example"]);
    // An ID token cannot set a customer's address, nor a customer another's: the route names its own contact only.
    const cross = await postJson(
      s.url,
      "/ai_agent/contact/email",
      { email: "x@evil.example" },
      bearer(world[0]!.admin),
    );
    expect(cross.status).toBe(401);
  });
});

describe("the account's outbox, for its admins", () => {
  it("counts pending and failed mails with the last error; operators are refused", async () => {
    live.sink = await startSmtpSink();
    // The agent's answer is mailed only after a day away: this test's outbox holds the transcript alone.
    const s = (live.server = await startMailServer(live.sink.port, {
      AIAGENT_MAIL_RETRY_DELAYS: "10",
      AIAGENT_MAIL_OFFLINE_SECONDS: "86400",
    }));
    const a = await s.account();
    const admin = await idToken(s.url, a);
    const operator = await addMember(s.url, admin, "op@team.example", "operator");
    await s.app.mailSender!.drain();
    const t = await issueTokens(s.url, a, "fay", { email: "fay@customer.example" });
    const { conversation_id } = await send(s.url, t.access_token, "Hello");
    live.sink.refuseNext(2);
    expect((await transcriptFromFrame(s, t.access_token, conversation_id)).status).toBe(200);
    await s.app.mailSender!.drain();
    const pending = await getJson(s.url, "/v1/account/mail", {}, bearer(admin));
    expect(pending.status).toBe(200);
    expect(pending.body.data).toMatchObject({ relay_configured: true, failed: 0 });
    expect(pending.body.data.pending).toBeGreaterThanOrEqual(1);
    expect(pending.body.data.last_error).toMatch(/451/);
    await due(s, 11_000);
    const failed = (await getJson(s.url, "/v1/account/mail", {}, bearer(admin))).body.data;
    expect(failed).toMatchObject({ relay_configured: true, failed: 1, pending: 1 });
    expect(failed.last_error).toMatch(/the relay refused: 451/);
    expect(Date.parse(failed.last_error_at)).toBeGreaterThan(0);
    expect((await getJson(s.url, "/v1/account/mail", {}, bearer(operator.idToken))).status).toBe(403);
    // Another account's outbox is its own.
    const b = await s.account();
    expect((await getJson(s.url, "/v1/account/mail", {}, bearer(await idToken(s.url, b)))).body.data).toMatchObject({
      pending: 0,
      failed: 0,
      last_error: "",
    });
  });
});
