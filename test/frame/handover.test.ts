import { mkdirSync } from "node:fs";
import type { Frame, Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { addMember, contacts, idToken } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { startServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { chatFrame, newContext, openCustomerFrame, typeMessage } from "./browser.js";
import { startEmbedding } from "./fixtures.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = embeddingForFile(canRun);

/** The operator's side: the account API with an ID token, as the client's inbox would call it. */
async function operator() {
  const token = await idToken(fx.e.service.url, fx.e.account);
  const auth = { authorization: `Bearer ${token}` };
  return {
    post: async (path: string, body: unknown) => {
      const r = await postJson(fx.e.service.url, path, body, auth);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      return r.body;
    },
    get: async (path: string, query: Record<string, string | number>) => {
      const r = await getJson(fx.e.service.url, path, query, auth);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      return r.body;
    },
    contacts: () => contacts(fx.e.service.url, token, fx.e.account.email),
  };
}

/**
 * Every call of the page that failed or answered an error. Chromium reports a streamed response read to its end
 * through a body reader (how the frame reads NDJSON) as net::ERR_ABORTED, while the same response read with
 * text() is not: that report is left out, and the frame's own error lines and notice are checked instead.
 */
function failedCalls(page: Page): string[] {
  const failed: string[] = [];
  page.on("requestfailed", (r) => {
    if (r.failure()?.errorText !== "net::ERR_ABORTED") failed.push(`${r.url()} ${r.failure()?.errorText}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.url()} ${r.status()}`);
  });
  return failed;
}

const within2s = { timeout: 2000 };

async function eventLine(frame: Frame, text: string): Promise<void> {
  await frame.locator(".msg--event", { hasText: text }).waitFor(within2s);
}

describe.runIf(canRun)("a person takes over the conversation the customer has open", () => {
  test("the operator finds the contact, reads, takes over, replies and releases; the open frame shows each step at once", async () => {
    const context = await newContext(fx.browser);
    const page = await context.newPage();
    const failed = failedCalls(page);
    await page.goto(`${fx.e.host.url}/`);
    const frame = await chatFrame(page);
    let navigations = 0;
    page.on("framenavigated", (f) => {
      if (f === frame) navigations++;
    });

    // The customer writes; the AI agent answers.
    await typeMessage(frame, "Hello");
    await frame
      .locator(".msg--assistant", { hasText: "I can answer questions about “Shipping” and “Returns”" })
      .waitFor();
    await typeMessage(frame, "My parcel arrived damaged, can a person help?");
    await frame.locator(".msg--assistant").nth(1).waitFor();

    // The operator: contact → its conversations → the messages.
    const op = await operator();
    const list = await op.contacts();
    const contact = list.body.data.data.contacts[0];
    expect(contact.user_id).toMatch(/^visitor-/);
    const convs = await op.get("/get_conversations_for_contact", { contact_id: contact.contact_id });
    const conversationId: string = convs.data.conversations[0].conversation_id;
    expect(conversationId).toBe(contact.latest_conversation_id);
    const messages = await op.get("/get_messages_for_conversation", { conversation_id: conversationId });
    expect(messages.messages.map((m: { content: string }) => m.content)).toContain(
      "My parcel arrived damaged, can a person help?",
    );

    // Take over: the frame names the person within 2 s, in the log and the header.
    await op.post("/take_over_conversation", { conversation_id: conversationId, operator_name: "Sam" });
    await eventLine(frame, "Sam from Shop assistant has joined the conversation.");
    await frame.locator("#title", { hasText: /^Sam$/ }).waitFor(within2s);
    expect(await frame.locator("#subtitle").textContent()).toBe("Support team · Shop assistant");

    // The customer writes before Sam has answered: told at once that a person will reply; no AI answer.
    const assistantBefore = await frame.locator(".msg--assistant").count();
    await typeMessage(frame, "Thank you, I will wait");
    await eventLine(frame, "Sam from Shop assistant will reply here as soon as possible.");
    expect(await frame.locator(".msg--assistant").count()).toBe(assistantBefore);

    // Sam replies: it shows within 2 s, without a reload.
    await op.post("/reply_to_conversation", {
      conversation_id: conversationId,
      content: "Hi, I'm Sam. I'm sorry about the parcel: a replacement is on its way.",
    });
    await frame.locator(".msg--operator", { hasText: "a replacement is on its way" }).waitFor(within2s);

    if (process.env.UPDATE_DOCS === "1") {
      mkdirSync(new URL("../../docs/", import.meta.url), { recursive: true });
      await page
        .locator("#aiagent-chat")
        .screenshot({ path: new URL("../../docs/handover.png", import.meta.url).pathname, animations: "disabled" });
    }

    // Released: the frame says so, the header is the assistant's again, and the AI agent answers the next message.
    await op.post("/release_conversation", { conversation_id: conversationId });
    await eventLine(frame, "Sam has left the conversation. The AI assistant answers again.");
    await frame.locator("#title", { hasText: /^Shop assistant$/ }).waitFor(within2s);
    const shippingAnswers = frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" });
    const answeredBefore = await shippingAnswers.count();
    await typeMessage(frame, "How long does shipping take?");
    await shippingAnswers.nth(answeredBefore).waitFor();

    // Closed by the operator: the frame says so; the customer's next message reopens the same conversation.
    await op.post("/close_conversation", { conversation_id: conversationId });
    await eventLine(frame, "This conversation was closed. Write a message to reopen it.");
    // The damaged parcel was answered from the returns snippet already: the new answer is the next one of them.
    const returnsAnswers = frame.locator(".msg--assistant", { hasText: "return any item within 30 days" });
    const returnsBefore = await returnsAnswers.count();
    await typeMessage(frame, "Can I return an item?");
    await eventLine(frame, "The conversation was reopened.");
    await returnsAnswers.nth(returnsBefore).waitFor();
    const after = await op.get("/get_conversations_for_contact", { contact_id: contact.contact_id });
    expect(after.data.conversations).toHaveLength(1);
    expect(after.data.conversations[0]).toMatchObject({ conversation_id: conversationId, status: "live" });

    // Every message once, in order, as stored.
    const shown = await frame
      .locator("[data-message-id]")
      .evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.order));
    const stored = await op.get("/get_messages_for_conversation", { conversation_id: conversationId, limit: 100 });
    expect(shown).toEqual(stored.messages.map((m: { message_order: number }) => String(m.message_order)));
    expect(navigations).toBe(0);
    expect(failed).toEqual([]);
    expect(await frame.locator(".msg--error").count()).toBe(0);
    expect(await frame.locator("#notice").isHidden()).toBe(true);
    await context.close();
  });

  test("a reloaded frame shows who holds the conversation, and an operator's reply arrives live", async () => {
    const opened = await openCustomerFrame(fx.browser, fx.e.host.url);
    const { context, page } = opened;
    let { frame } = opened;
    await typeMessage(frame, "Hello");
    await frame.locator(".msg--assistant[data-message-id]").first().waitFor();
    const op = await operator();
    const contact = (await op.contacts()).body.data.data.contacts[0];
    const id = contact.latest_conversation_id;
    // No name given: the customer sees the local part of the operator's e-mail (a member of the account).
    await addMember(fx.e.service.url, await idToken(fx.e.service.url, fx.e.account), "kim@shop.example");
    await op.post("/take_over_conversation", { conversation_id: id, operator_email: "kim@shop.example" });
    await frame.locator("#title", { hasText: /^kim$/ }).waitFor(within2s);

    await page.reload();
    frame = await chatFrame(page);
    await frame.locator("#title", { hasText: /^kim$/ }).waitFor();
    await op.post("/reply_to_conversation", { conversation_id: id, content: "Kim here, how can I help?" });
    await frame.locator(".msg--operator", { hasText: "Kim here" }).waitFor(within2s);
    await context.close();
  });

  test(
    "when the stream cannot be held (a proxy that buffers it), the frame polls and still shows the reply",
    async () => {
      const context = await newContext(fx.browser);
      const page = await context.newPage();
      // Nothing of the watch stream ever reaches the frame: the request hangs, as behind a buffering proxy.
      await page.route("**/watch_conversation?**", () => undefined);
      await page.goto(`${fx.e.host.url}/`);
      const frame = await chatFrame(page);
      await typeMessage(frame, "Hello");
      await frame.locator(".msg--assistant[data-message-id]").first().waitFor();
      const op = await operator();
      const id = (await op.contacts()).body.data.data.contacts[0].latest_conversation_id;
      await op.post("/take_over_conversation", { conversation_id: id, operator_name: "Alex" });
      await op.post("/reply_to_conversation", { conversation_id: id, content: "Alex here, by polling" });
      // The first event is awaited 5 s, then polling starts (every 2 s while things change).
      await frame.locator(".msg--operator", { hasText: "Alex here, by polling" }).waitFor({ timeout: scaled(15_000) });
      await eventLine(frame, "Alex from Shop assistant has joined the conversation.");
      await frame.locator("#title", { hasText: /^Alex$/ }).waitFor();
      await context.close();
    },
    scaled(30_000),
  );

  test("the frame's stream, cut by a server restart, resumes: every message once, in order", async () => {
    const own = await startEmbedding();
    const context = await newContext(fx.browser);
    try {
      const page = await context.newPage();
      await page.goto(`${own.host.url}/`);
      const frame = await chatFrame(page);
      await typeMessage(frame, "Hello");
      await frame.locator(".msg--assistant[data-message-id]").first().waitFor();
      const talk = async (path: string, body: unknown) => {
        const token = await idToken(own.service.url, own.account);
        const r = await postJson(own.service.url, path, body, { authorization: `Bearer ${token}` });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      };
      const id = (await contacts(own.service.url, await idToken(own.service.url, own.account), own.account.email)).body
        .data.data.contacts[0].latest_conversation_id;
      await talk("/take_over_conversation", { conversation_id: id, operator_name: "Sam" });
      await talk("/reply_to_conversation", { conversation_id: id, content: "Before the restart" });
      await frame.locator(".msg--operator", { hasText: "Before the restart" }).waitFor(within2s);

      // The service restarts on the same port and database; meanwhile Sam writes again.
      const { port } = own.service.server;
      await own.service.close();
      own.service = await startServer({ dir: own.service.dir, env: { AIAGENT_PORT: String(port) } });
      // The first call may meet a keep-alive connection of the old server not yet seen closed: one retry.
      await idToken(own.service.url, own.account).catch(() => undefined);
      await talk("/reply_to_conversation", { conversation_id: id, content: "While you were away" });
      await talk("/reply_to_conversation", { conversation_id: id, content: "After the restart" });
      await frame.locator(".msg--operator", { hasText: "After the restart" }).waitFor({ timeout: scaled(10_000) });

      const shown = await frame
        .locator("[data-message-id]")
        .evaluateAll((els) =>
          els.map((el) => [(el as HTMLElement).dataset.order, el.querySelector(".msg__bubble")?.textContent]),
        );
      expect(shown.map(([order]) => order)).toEqual(["1", "2", "3", "4", "5"]);
      expect(shown.slice(2).map(([, text]) => text)).toEqual([
        "Before the restart",
        "While you were away",
        "After the restart",
      ]);
    } finally {
      await context.close();
      await own.host.close();
      await own.service.close(true);
    }
  });
});
