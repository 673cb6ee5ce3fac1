// Issue 45 (helpdesk basics) in Chromium: an operator keeps a personal saved reply whose variables are filled when it
// is inserted; the admin mentions her in a note with "@"; she is told live (the menu's count), reads it in Mentions
// (read when opened), and the mention's e-mail arrives at the relay on loopback. axe on the changed pages.
import { describe, expect, it } from "vitest";
import { axeViolations } from "../console/axe.js";
import { signIn } from "../console/sign-in.js";
import { launchBrowser, newContext } from "../frame/browser.js";
import { type Embedding, startEmbedding } from "../frame/fixtures.js";
import { addNoteMentioning } from "../helpers/console-notes.js";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { waitFor } from "../helpers/time-scale.js";
import { mailEnv } from "./mail-fixture.js";
import { freePort, startSmtpSink } from "./smtp-sink.js";

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

describe.runIf(canRun)("a mention and a personal saved reply in the console", () => {
  it("fills the reply's variables, notifies the person mentioned live and by e-mail", async () => {
    const [sink, port, browser] = await Promise.all([startSmtpSink(), freePort(), launchBrowser()]);
    const e: Embedding | undefined = await startEmbedding({
      env: mailEnv(port, sink.port),
      overrides: { mailPollMs: 20, extraRoutes: consoleAndFrameRoutes },
    }).catch(() => undefined);
    try {
      if (!e) throw new Error("the service did not start");
      const s = e.service;
      const owner = await idToken(s.url, e.account);
      const bea = await addMember(s.url, owner, "bea@shop.example", "operator");
      const named = await postJson(
        s.url,
        "/v1/account/profile",
        { display_name: "Bea", avatar_url: "" },
        { authorization: `Bearer ${bea.idToken}` },
      );
      expect(named.status).toBe(200);
      const t = await issueTokens(s.url, e.account, "ada", { contact_name: "Ada" });
      await send(s.url, t.access_token, "Where is my parcel?");

      // Bea keeps a personal saved reply; an unknown variable is flagged while she writes it.
      const beaContext = await newContext(browser, { width: 1280, height: 800 });
      const page = await beaContext.newPage();
      /** axe on the page as it stands, at 1280 and 375 px; back to 1280 px after. */
      const accessible = async (what: string) => {
        for (const width of [1280, 375, 1280]) {
          await page.setViewportSize({ width, height: 800 });
          expect(await axeViolations(page), `${what} at ${width} px`).toEqual([]);
        }
      };
      await signIn(page, s.url, bea.email, bea.password);
      await page.getByRole("link", { name: "Saved replies" }).click();
      await page.getByLabel("Shortcut").fill("hi");
      await page.getByLabel("Text").fill("Hi {{contact.name}}, {{order.id}}");
      await page.getByText("Unknown variable: {{order.id}}. It will be left as written.").waitFor();
      await page
        .getByLabel("Text")
        .fill("Hi {{contact.name}}, {{operator.name}} of {{chatbot.name}} here. {{contact.email}}");
      await page.getByRole("button", { name: "Add saved reply" }).click();
      await page.getByTestId("saved-replies").getByText("Yours").waitFor();
      await accessible("saved replies");

      // In the inbox: "/hi" offers it marked as hers; Enter fills it in, an empty value left visible and named.
      await page.getByRole("link", { name: "Inbox" }).click();
      await page.locator(".contact").first().click();
      await page.getByRole("button", { name: "Take over" }).click();
      const reply = page.getByLabel(/^Reply to/);
      await reply.fill("/hi");
      await page.getByRole("option", { name: /\/hi\s*yours/ }).waitFor();
      await reply.press("Enter");
      // The chatbot's name comes with the list's row, so an operator's console fills it too (listing chatbots is the
      // admins'); a contact with no e-mail leaves {{contact.email}} as written, named.
      await expect.poll(() => reply.inputValue()).toBe("Hi Ada, Bea of Shop assistant here. {{contact.email}}");
      await page.getByText("No value for {{contact.email}}: replace it before sending.").waitFor();
      // The warning goes under the box, never beside it: the box keeps most of the reply row, at 1280 and 375 px.
      for (const width of [1280, 375]) {
        await page.setViewportSize({ width, height: 800 });
        const box = (await reply.boundingBox())!;
        const row = (await page.locator("form.reply").boundingBox())!;
        expect(box.width, `the reply box at ${width} px`).toBeGreaterThan(row.width * 0.6);
      }
      await page.setViewportSize({ width: 1280, height: 800 });
      // Opened from a message search result, the same: the result carries the chatbot's name.
      await page.getByLabel("Search messages and notes").fill("parcel");
      const hit = page.getByTestId("search-hit").first();
      await hit.locator(".contact__bot", { hasText: "Shop assistant" }).waitFor();
      await hit.click();
      await page.locator(".message--user", { hasText: "Where is my parcel?" }).waitFor();
      await reply.fill("/hi");
      await page.getByRole("option", { name: /\/hi\s*yours/ }).waitFor();
      await reply.press("Enter");
      await expect.poll(() => reply.inputValue()).toBe("Hi Ada, Bea of Shop assistant here. {{contact.email}}");
      await reply.fill("");
      await page.getByLabel("Search messages and notes").fill("");

      // The admin mentions Bea in a note: "@Be" suggests her.
      const adminContext = await newContext(browser, { width: 1280, height: 800 });
      const admin = await adminContext.newPage();
      await signIn(admin, s.url, e.account.email, e.account.password);
      await admin.locator(".contact").first().click();
      await addNoteMentioning(admin, "Bea", "please check the carrier, MENTION-7");

      // Bea is told live, in the menu; Mentions shows the note and reads it.
      await page.getByTestId("mentions-count").filter({ hasText: "1" }).waitFor();
      await page.getByRole("link", { name: /^Mentions/ }).click();
      await page.getByTestId("mention").filter({ hasText: "MENTION-7" }).waitFor();
      await page.getByTestId("mentions-count").waitFor({ state: "detached" });
      await accessible("mentions");
      const mentionMails = () => sink.received.filter((m) => m.parsed.subject?.includes("mentioned you"));
      await s.app.mailSender!.drain();
      await waitFor("the mention's e-mail arrives", () => mentionMails().length === 1);
      expect(mentionMails()[0]!.to).toEqual(["bea@shop.example"]);
      expect(mentionMails()[0]!.parsed.text).toContain("MENTION-7");
      // The customer's conversation never holds the note.
      expect(JSON.stringify(sink.received.filter((m) => m.to.includes("ada")))).not.toContain("MENTION-7");
      await beaContext.close();
      await adminContext.close();
    } finally {
      await Promise.all([browser.close(), e?.close(), sink.close()]);
    }
  });
});
