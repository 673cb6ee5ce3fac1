import { describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleAndFrameForFile } from "../helpers/browser-fixtures.js";
import { addNoteToFirst, seesNoteLive } from "../helpers/console-notes.js";
import { addMember, idToken } from "../helpers/flows.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { customerWrites, signIn } from "./sign-in.js";

// Issue 31, team features: views, internal notes and saved replies in the console, with the customer's real frame.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = consoleAndFrameForFile(canRun);

const NOTE = "Refund approved by finance; do not promise a date.";
const SAVED = "Your refund has been approved and is on its way to you.";

describe.runIf(canRun)("views, internal notes and saved replies", () => {
  test(
    "A's note reaches B live and never the customer; B works from Unassigned and Mine and answers with a saved reply",
    async () => {
      const b = await addMember(fx.e.service.url, await idToken(fx.e.service.url, fx.e.account), "bea@shop.example");

      // The customer writes in the client's page.
      const { context: customer, frame } = await customerWrites(
        fx.browser,
        fx.e.host.url,
        "My refund has not arrived yet.",
      );

      // B (operator) finds it under Unassigned, not under Mine; takes it over; then it is under Mine.
      const beaContext = await newContext(fx.browser, { width: 1280, height: 800 });
      const bea = await beaContext.newPage();
      await signIn(bea, fx.e.service.url, b.email, b.password);
      const views = bea.getByRole("group", { name: "Whose conversations" });
      await views.getByRole("button", { name: "Mine" }).click();
      await bea.getByText("No contacts match.").waitFor();
      await views.getByRole("button", { name: "Unassigned" }).click();
      await bea.locator(".contact").first().click();
      await bea.getByRole("button", { name: "Take over" }).click();
      await bea.getByText(`Held by bea (${b.email})`).waitFor();
      await views.getByRole("button", { name: "Mine" }).click();
      await bea.locator(".contact").first().waitFor();
      await views.getByRole("button", { name: "Unassigned" }).click();
      await bea.getByText("No contacts match.").waitFor();
      await views.getByRole("button", { name: "Mine" }).click();
      await bea.locator(".contact").first().click();
      await bea.getByRole("heading", { name: "Internal notes" }).waitFor();

      // A (the admin) adds a saved reply on its page, then writes a note on the conversation.
      const adminContext = await newContext(fx.browser, { width: 1280, height: 800 });
      const admin = await adminContext.newPage();
      await signIn(admin, fx.e.service.url, fx.e.account.email, fx.e.account.password);
      await admin.getByRole("link", { name: "Saved replies" }).click();
      await admin.getByLabel("Shortcut").fill("refund");
      await admin.getByLabel("Text").fill(SAVED);
      await admin.getByRole("button", { name: "Add saved reply" }).click();
      await admin.getByTestId("saved-replies").getByText("/refund").waitFor();
      for (const width of [1280, 375]) {
        await admin.setViewportSize({ width, height: 800 });
        expect(await axeViolations(admin), `saved replies at ${width} px`).toEqual([]);
      }
      await admin.setViewportSize({ width: 1280, height: 800 });
      await admin.getByRole("link", { name: "Inbox" }).click();
      await addNoteToFirst(admin, NOTE);

      // B sees it live, apart from the messages, with its author.
      // By the author's name (issue 45): with none set, their e-mail's local part, not the e-mail.
      await seesNoteLive(bea, NOTE, fx.e.account.email.split("@")[0]!);

      // B answers with the saved reply: "/" opens the list, typing filters it, Enter fills the reply.
      const reply = bea.getByLabel(/^Reply to/);
      await reply.fill("/ref");
      const option = bea.getByRole("option", { name: /\/refund/ });
      await option.waitFor();
      expect(await option.getAttribute("aria-selected")).toBe("true");
      for (const width of [1280, 375]) {
        await bea.setViewportSize({ width, height: 800 });
        expect(await axeViolations(bea), `inbox with a note and the picker at ${width} px`).toEqual([]);
      }
      await bea.setViewportSize({ width: 1280, height: 800 });
      await reply.press("Enter");
      expect(await reply.inputValue()).toBe(SAVED);
      await bea.getByRole("button", { name: "Send" }).click();
      await bea.locator(".message--operator", { hasText: SAVED }).waitFor();

      // The customer gets the reply, which was written after the note; the note is nowhere in the frame.
      await frame.locator(".msg--operator", { hasText: SAVED }).waitFor();
      expect(await frame.locator("body").textContent()).not.toContain(NOTE);
      expect(await frame.content()).not.toContain("Refund approved by finance");

      // docs/inbox.md's screenshot of a conversation with a note, written only when asked (UPDATE_DOCS=1).
      if (process.env.UPDATE_DOCS === "1")
        await bea.screenshot({ path: new URL("../../docs/inbox-note.png", import.meta.url).pathname });
      await Promise.all([customer.close(), beaContext.close(), adminContext.close()]);
    },
    scaled(120_000),
  );
});
