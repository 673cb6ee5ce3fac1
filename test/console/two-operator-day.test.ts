import type { BrowserContext, Frame } from "playwright-core";
import { describe, expect, test } from "vitest";
import { startHostPage } from "../../examples/host-page/server.js";
import type { AppOverrides } from "../../src/app.js";
import { chatFrame, freePort, newContext, typeMessage } from "../frame/browser.js";
import { KNOWLEDGE, startEmbedding } from "../frame/fixtures.js";
import { browserForFile } from "../helpers/browser-fixtures.js";
import { addNoteToFirst, seesNoteLive } from "../helpers/console-notes.js";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { addMember, idToken } from "../helpers/flows.js";
import { type Instance, startInstances } from "../helpers/instances.js";
import { discPng } from "../helpers/png.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { notifiedPage, signIn } from "./sign-in.js";

// Issue 31's two-operator day, end to end in real Chromium: a customer writes in the client's page; admin A finds
// the conversation under Unassigned and assigns it to operator B; B finds it under Mine and is notified; B's note
// reaches A live and never the customer; B answers with A's saved reply while the customer sees B typing, then B's
// name and picture. Once on one SQLite instance, once on two instances over one PostgreSQL database.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const pgSkip = canRun ? await postgresSkipReason() : undefined;
if (pgSkip) console.warn(`two-operator day on two PostgreSQL instances skipped: ${pgSkip}`);

const overrides: AppOverrides = { extraRoutes: consoleAndFrameRoutes };
const NOTE = "Customer is a repeat buyer; refund approved, no date promised.";
const SAVED = "Your refund has been approved and is on its way to you.";
const B_NAME = "Bea Stone";

const fx = browserForFile(canRun);

/** Where each person works: A's console, B's console, and the client's page that embeds the frame. */
interface Day {
  adminUrl: string;
  memberUrl: string;
  hostUrl: string;
  account: TestAccount;
}

async function playDay(d: Day): Promise<void> {
  const contexts: BrowserContext[] = [];
  const context = async () => {
    const c = await newContext(fx.browser, { width: 1280, height: 800 });
    contexts.push(c);
    return c;
  };
  try {
    const b = await addMember(d.adminUrl, await idToken(d.adminUrl, d.account), "bea@shop.example");

    // A (admin) adds the saved reply B will use.
    const admin = await (await context()).newPage();
    await signIn(admin, d.adminUrl, d.account.email, d.account.password);
    await admin.getByRole("link", { name: "Saved replies" }).click();
    await admin.getByLabel("Shortcut").fill("refund");
    await admin.getByLabel("Text").fill(SAVED);
    await admin.getByRole("button", { name: "Add saved reply" }).click();
    await admin.getByTestId("saved-replies").getByText("/refund").waitFor();

    // B (operator) sets a name and picture and turns desktop notifications on, then waits on Mine, empty so far.
    const bea = await notifiedPage(await context(), d.memberUrl);
    await signIn(bea, d.memberUrl, b.email, b.password);
    await bea.getByRole("link", { name: "My settings" }).click();
    await bea.getByLabel("Display name").fill(B_NAME);
    await bea.getByRole("button", { name: "Save name" }).click();
    await bea.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    await bea.locator("#picture-file").setInputFiles({ name: "bea.png", mimeType: "image/png", buffer: discPng() });
    await bea.getByTestId("my-picture").waitFor();
    await bea.getByLabel("Desktop notifications").check();
    await bea.getByRole("link", { name: "Inbox" }).click();
    const beaViews = bea.getByRole("group", { name: "Whose conversations" });
    await beaViews.getByRole("button", { name: "Mine" }).click();
    await bea.getByText("No contacts match.").waitFor();

    // The customer writes in the client's page; the AI agent answers first.
    const customer = await (await context()).newPage();
    await customer.goto(`${d.hostUrl}/`);
    const frame: Frame = await chatFrame(customer);
    await typeMessage(frame, "My refund has not arrived yet.");
    await frame.locator(".msg--assistant[data-message-id]").first().waitFor();

    // A finds it under Unassigned and assigns it to B.
    await admin.getByRole("link", { name: "Inbox" }).click();
    const adminViews = admin.getByRole("group", { name: "Whose conversations" });
    await adminViews.getByRole("button", { name: "Unassigned" }).click();
    await admin.locator(".contact").first().click();
    await admin.getByLabel("Assign to").selectOption(b.email);
    await admin.getByRole("button", { name: "Assign", exact: true }).click();
    await admin.getByText(`Held by ${B_NAME} (${b.email})`).waitFor();
    // The customer is told who joined: B's own display name, though A did the assigning.
    await frame
      .locator(".msg--event", { hasText: `${B_NAME} from` })
      .filter({ hasText: "has joined" })
      .waitFor();

    // B's Mine fills in live. The customer writes again: B, who holds it now, gets a desktop notification.
    await bea.locator(".contact").first().waitFor();
    await typeMessage(frame, "Is anyone there?");
    await bea.waitForFunction(() =>
      (window as unknown as { __notes: { body: string }[] }).__notes.some((n) => n.body === "Is anyone there?"),
    );
    const notes = await bea.evaluate(() => (window as unknown as { __notes: unknown[] }).__notes);
    expect(notes).toContainEqual({ title: "New customer message", body: "Is anyone there?" });

    // A keeps the conversation open (under All, as it is no longer unassigned) to follow B's work.
    await adminViews.getByRole("button", { name: "All" }).click();
    await admin.locator(".contact").first().click();
    await admin.getByRole("heading", { name: "Internal notes" }).waitFor();

    // B writes a note: A sees it live, apart from the messages; the customer does not.
    await addNoteToFirst(bea, NOTE);
    // By B's display name (issue 45), not the e-mail.
    await seesNoteLive(admin, NOTE, B_NAME);

    // B answers with the saved reply, picked with "/": the customer sees B typing meanwhile.
    const reply = bea.getByLabel(/^Reply to/);
    await reply.click();
    await reply.pressSequentially("/ref", { delay: 30 });
    await frame.locator("#typing", { hasText: `${B_NAME} is typing…` }).waitFor();
    const option = bea.getByRole("option", { name: /\/refund/ });
    await option.waitFor();
    expect(await option.getAttribute("aria-selected")).toBe("true");
    await reply.press("Enter");
    expect(await reply.inputValue()).toBe(SAVED);
    await bea.getByRole("button", { name: "Send" }).click();

    // The customer gets the reply under B's name and picture; the typing line goes; the note is nowhere.
    const answer = frame.locator(".msg--operator", { hasText: SAVED });
    await answer.locator(".msg__who", { hasText: B_NAME }).waitFor();
    const pic = answer.locator("img.pic");
    await pic.waitFor();
    expect(await pic.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(64);
    await frame.locator("#typing").waitFor({ state: "hidden" });
    // A sees the reply too.
    await admin.locator(".message--operator", { hasText: SAVED }).waitFor();
    expect(await frame.locator("body").textContent()).not.toContain(NOTE);
    expect(await frame.content()).not.toContain("repeat buyer");
  } finally {
    await Promise.all(contexts.map((c) => c.close()));
  }
}

describe.runIf(canRun)("a two-operator day", () => {
  test(
    "on one instance over SQLite",
    async () => {
      const e = await startEmbedding({ overrides });
      try {
        await playDay({ adminUrl: e.service.url, memberUrl: e.service.url, hostUrl: e.host.url, account: e.account });
      } finally {
        await e.close();
      }
    },
    scaled(150_000),
  );

  test.skipIf(pgSkip !== undefined)(
    "on two instances over one PostgreSQL: A on the first, B on the second",
    async () => {
      const running = await startInstances(2, {}, overrides);
      const [one, two] = running.instances as [Instance, Instance];
      const port = await freePort();
      const hostOrigin = `http://127.0.0.1:${port}`;
      try {
        const account = await createTestAccount(one.app, "owner@two-operator-day.example", {
          origins: [hostOrigin],
          knowledge: KNOWLEDGE,
        });
        // The customer's frame reads the first instance, named localhost so its origin differs from the page's.
        const host = await startHostPage({
          serviceUrl: one.url,
          appUrl: one.url.replace("127.0.0.1", "localhost"),
          clientApiKey: account.apiKey,
          chatbotId: account.chatbotId,
          port,
        });
        try {
          await playDay({ adminUrl: one.url, memberUrl: two.url, hostUrl: host.url, account });
        } finally {
          await host.close();
        }
      } finally {
        await running.stop();
      }
    },
    scaled(150_000),
  );
});
