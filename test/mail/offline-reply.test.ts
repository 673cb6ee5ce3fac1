import { describe, expect, it } from "vitest";
import { issueTokens, ownerOf, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";
import {
  closedAfterEach,
  conversationWithReply,
  due,
  header,
  linkOf,
  operatorMail,
  startMailServer,
  unsubscribeUrl,
} from "./mail-fixture.js";
import { freePort, startSmtpSink } from "./smtp-sink.js";

/** The service and the relay of the test running, closed after it. */
const live = closedAfterEach();

/** The service on a port known in advance (the mails' links name it), closed after each test. */
async function start(smtpPort: number, env: Record<string, string> = {}) {
  live.server = await startMailServer(smtpPort, env);
  return live.server;
}

describe("a reply to a customer who is away is e-mailed", () => {
  it("arrives multipart with one-click unsubscribe headers, and its link opens the conversation once", async () => {
    live.sink = await startSmtpSink();
    const s = await start(live.sink.port);
    const { a, conversationId } = await conversationWithReply(s);
    // Not before the customer has been away for the offline wait.
    await s.app.mailSender!.drain();
    expect(live.sink.received).toHaveLength(0);
    await due(s);
    await waitFor("the operator's reply arrives", () => operatorMail(live.sink!.received).length === 1);
    const [m] = operatorMail(live.sink.received);
    expect(m!.to).toEqual(["ann@customer.example"]);
    expect(m!.parsed.from?.text).toBe('"Support" <support@shop.example>');
    expect(m!.parsed.subject).toBe("New reply from Test bot");
    expect(m!.parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
    expect(m!.parsed.text).toContain("It ships tomorrow <b>morning</b>.");
    expect(m!.parsed.html).toContain("It ships tomorrow &lt;b&gt;morning&lt;/b&gt;.");
    expect(unsubscribeUrl(m!)).toMatch(new RegExp(`^${s.url}/mail/unsubscribe/us_[A-Za-z0-9_-]{43}$`));
    expect(header(m!, "list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    // The agent's answer (the customer left before reading it too) came as a mail of its own, once.
    expect(live.sink.received).toHaveLength(2);

    const link = linkOf(m!);
    expect(link.startsWith(`${s.url}/mail/open/${a.chatbotId}?launch=lc_`)).toBe(true);
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-src 'self'");
    const code = new URL(link).searchParams.get("launch")!;
    expect(await page.text()).toContain(`/chatbot-iframe/${a.chatbotId}?launch=${code}`);
    // The frame inside that page exchanges the code, bound to this service's own page, once.
    const launch = () =>
      postJson(s.url, "/ai_agent/launch", { chatbot_id: a.chatbotId, launch_code: code, embed_origin: s.url });
    const first = await launch();
    expect(first.status).toBe(200);
    const history = await getJson(s.url, "/get_messages_for_conversation", {
      conversation_id: conversationId,
      access_token: first.body.data.access_token,
    });
    expect(history.status).toBe(200);
    expect(JSON.stringify(history.body)).toContain("It ships tomorrow");
    expect((await launch()).status).not.toBe(200);
    // Another origin cannot use a mail's code either.
    const other = linkOf(live.sink.received.find((r) => r !== m)!);
    const otherCode = new URL(other).searchParams.get("launch")!;
    const foreign = await postJson(s.url, "/ai_agent/launch", {
      chatbot_id: a.chatbotId,
      launch_code: otherCode,
      embed_origin: "https://shop.example",
    });
    expect(foreign.status).not.toBe(200);
  });

  it("a link no longer works once it expired", async () => {
    live.sink = await startSmtpSink();
    const s = await start(live.sink.port);
    const { a } = await conversationWithReply(s);
    await due(s);
    await waitFor("the reply arrives", () => operatorMail(live.sink!.received).length === 1);
    const code = new URL(linkOf(operatorMail(live.sink.received)[0]!)).searchParams.get("launch")!;
    s.clock.advance(601_000);
    const r = await postJson(s.url, "/ai_agent/launch", {
      chatbot_id: a.chatbotId,
      launch_code: code,
      embed_origin: s.url,
    });
    expect(r.status).not.toBe(200);
  });

  it("is not sent to a customer who has the conversation open", async () => {
    live.sink = await startSmtpSink();
    const s = await start(live.sink.port);
    const a = await s.account();
    const t = await issueTokens(s.url, a, "bea", { email: "bea@customer.example" });
    const sent = await send(s.url, t.access_token, "Hello?");
    const watching = new AbortController();
    const stream = await fetch(
      `${s.url}/watch_conversation?conversation_id=${sent.conversation_id}&access_token=${t.access_token}`,
      { signal: watching.signal },
    );
    const reader = stream.body!.getReader();
    await reader.read(); // the stream is open: its first event came
    await s.app.conversations.actions.reply(ownerOf(a), sent.conversation_id, "It ships tomorrow.");
    await s.app.offlineReplies!.idle();
    await due(s);
    watching.abort();
    // Only the agent's answer, written before the stream opened and read since, could have been queued: it is not sent.
    expect(operatorMail(live.sink.received)).toHaveLength(0);
    expect(live.sink.received).toHaveLength(0);
    expect(await s.app.store.mail.counts(a.accountId)).toMatchObject({ pending: 0, failed: 0 });
  });

  it("unsubscribing in one click stops further mail; a GET of the link unsubscribes nobody", async () => {
    live.sink = await startSmtpSink();
    const s = await start(live.sink.port);
    const { a, t, conversationId } = await conversationWithReply(s);
    await due(s);
    await waitFor("the reply arrives", () => operatorMail(live.sink!.received).length === 1);
    const url = unsubscribeUrl(operatorMail(live.sink.received)[0]!);
    expect((await fetch(url)).status).toBe(200);
    expect(await s.app.store.mail.unsubscribed(a.accountId, "ann@customer.example")).toBe(false);
    // The mail client's one-click POST (RFC 8058).
    const r = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(r.status).toBe(200);
    expect(await s.app.store.mail.unsubscribed(a.accountId, "ann@customer.example")).toBe(true);
    expect((await fetch(`${s.url}/mail/unsubscribe/us_${"x".repeat(43)}`, { method: "POST" })).status).toBe(404);
    const before = live.sink.received.length;
    await send(s.url, t.access_token, "One more thing", conversationId);
    await s.app.conversations.actions.reply(ownerOf(a), conversationId, "Sure, anything else?");
    await s.app.offlineReplies!.idle();
    await due(s);
    expect(live.sink.received).toHaveLength(before);
    expect(await s.app.store.mail.counts(a.accountId)).toMatchObject({ pending: 0 });
  });

  it("retries while the relay is down, then delivers each mail exactly once", async () => {
    const port = await freePort();
    const s = await start(port);
    const { a } = await conversationWithReply(s);
    await due(s);
    // Nothing listens: both mails failed once, and say why.
    const down = await s.app.store.mail.counts(a.accountId);
    expect(down).toMatchObject({ pending: 2, failed: 0 });
    expect(down.lastError).toMatch(/could not be reached/);
    const ready = await getJson(s.url, "/readyz");
    expect(ready.body).toMatchObject({ status: "ready", mail: { relay: "configured", pending: 2, failed: 0 } });
    // The relay comes back, refusing one message for now (451): tried again later, then delivered.
    live.sink = await startSmtpSink(port);
    live.sink.refuseNext(1);
    await due(s, 11_000);
    expect(live.sink.received).toHaveLength(1);
    expect((await s.app.store.mail.counts(a.accountId)).lastError).toMatch(/451/);
    await due(s, 11_000);
    expect(live.sink.received).toHaveLength(2);
    await due(s, 60_000);
    expect(live.sink.received).toHaveLength(2);
    expect(new Set(live.sink.received.map((m) => m.parsed.text)).size).toBe(2);
    expect(await s.app.store.mail.counts(a.accountId)).toEqual({
      pending: 0,
      failed: 0,
      lastError: "",
      lastErrorAt: null,
    });
  });

  it("gives up after the last retry, and says so", async () => {
    const port = await freePort();
    const s = await start(port, { AIAGENT_MAIL_RETRY_DELAYS: "10" });
    const { a } = await conversationWithReply(s);
    await due(s);
    await due(s, 11_000);
    const c = await s.app.store.mail.counts(a.accountId);
    expect(c).toMatchObject({ pending: 0, failed: 2 });
    expect(s.logs.some((l) => l.includes("mail: failed for good"))).toBe(true);
  });

  it("another account cannot send mail to a customer who is not theirs", async () => {
    live.sink = await startSmtpSink();
    const s = await start(live.sink.port);
    const { a } = await conversationWithReply(s, "ann@customer.example", "shared-user");
    // Another account names the same user id with its own address: its contact is its own, not a's.
    const b = await s.account();
    const tb = await issueTokens(s.url, b, "shared-user", { email: "mallory@attacker.example" });
    await due(s);
    await waitFor("a's mails arrive", () => live.sink!.received.length === 2);
    expect(live.sink.received.flatMap((m) => m.to)).toEqual(["ann@customer.example", "ann@customer.example"]);
    // b's operator cannot reply into a's conversation, so nothing of a's reaches b's address either.
    const aConv = (await s.app.store.conversations.forUser(a.accountId, a.chatbotId, "shared-user", 1))[0]!;
    await expect(s.app.conversations.actions.reply(ownerOf(b), aConv.conversationId, "hi")).rejects.toThrow();
    const bSent = await send(s.url, tb.access_token, "hello");
    expect(bSent.conversation_id).not.toBe(aConv.conversationId);
    await s.app.offlineReplies!.idle();
    await due(s);
    // b's own customer hears from b's agent; nothing of a's conversation goes there, and a's customer gets nothing more.
    await waitFor("b's answer arrives", () => live.sink!.received.length === 3);
    const toMallory = live.sink.received.filter((m) => m.to.includes("mallory@attacker.example"));
    expect(toMallory).toHaveLength(1);
    expect(toMallory[0]!.parsed.text).not.toContain("It ships tomorrow");
    expect(live.sink.received.filter((m) => m.to.includes("ann@customer.example"))).toHaveLength(2);
  });
});

describe("without a relay", () => {
  it("queues and sends nothing, and /readyz says so", async () => {
    live.server = await startServer();
    expect(live.server.app.mailSender).toBeUndefined();
    const ready = await getJson(live.server.url, "/readyz");
    expect(ready.body).toEqual({ status: "ready", mail: { relay: "not configured" } });
    const a = await live.server.account();
    const t = await issueTokens(live.server.url, a, "cy", { email: "cy@customer.example" });
    await send(live.server.url, t.access_token, "Hi");
    expect(await live.server.app.store.mail.counts(a.accountId)).toMatchObject({ pending: 0, failed: 0 });
  });
});
