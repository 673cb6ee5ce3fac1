import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import { newContext } from "../frame/browser.js";
import { type ConsoleRun, consoleOnBothBackends } from "../helpers/console-instances.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { docShot } from "./doc-shot.js";
import { signIn } from "./sign-in.js";

// Issue 45, the timeline: Sam takes a customer's conversation from the AI agent; Bea takes it from Sam, only once she
// has confirmed; Sam is told on his open console, and both consoles' timelines say "Bea Stone took over from Sam Lee".
// Once on one SQLite instance, once on two instances over one PostgreSQL database (Sam on the first, Bea on the second).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const runs = await consoleOnBothBackends(canRun);

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/** Who holds the customer's conversation, as the account API says. */
async function holder(r: ConsoleRun, conversationId: string): Promise<string> {
  const lines = await getJson(
    r.one,
    "/list_conversation_activity",
    { conversation_id: conversationId },
    bearer(await idToken(r.one, r.account)),
  );
  const last = lines.body.data.activities.at(-1);
  return last?.to_email ?? "ai_agent";
}

async function open(page: Page, name: string) {
  await page.locator(".contact", { hasText: name }).click();
  await page.locator(".message--user").first().waitFor();
}

describe.runIf(canRun)("taking over from a colleague", () => {
  runs.twice(
    "asks first, tells the holder live, and both timelines say who took it from whom",
    async (r) => {
      const ownerToken = await idToken(r.one, r.account);
      await postJson(r.one, "/v1/account/profile", { display_name: "Sam Lee" }, bearer(ownerToken));
      const bea = await addMember(r.one, ownerToken, "bea@shop.example");
      await postJson(r.one, "/v1/account/profile", { display_name: "Bea Stone" }, bearer(bea.idToken));
      const t = await issueTokens(r.one, r.account, "takeover-1", { contact_name: "Ada Lovelace" });
      const { conversation_id } = await send(r.one, t.access_token, "My order A-1001 has not arrived.");

      // Sam takes it from the AI agent: no question asked.
      const samContext = await newContext(r.browser, { width: 1280, height: 800 });
      const sam = await samContext.newPage();
      await signIn(sam, r.one, r.account.email, r.account.password);
      await open(sam, "Ada Lovelace");
      await sam.getByRole("button", { name: "Take over", exact: true }).click();
      await sam.getByTestId("activity").filter({ hasText: "Sam Lee took over from the AI agent" }).waitFor();
      await sam.getByText(`Held by Sam Lee (${r.account.email})`).waitFor();

      // Bea opens it: taking it from Sam asks first; Cancel changes nothing.
      const beaContext = await newContext(r.browser, { width: 1280, height: 800 });
      const page = await beaContext.newPage();
      await signIn(page, r.two, bea.email, bea.password);
      await open(page, "Ada Lovelace");
      await page.getByText(`Held by Sam Lee (${r.account.email})`).waitFor();
      await page.getByRole("button", { name: "Take over", exact: true }).click();
      const question = page.getByRole("alertdialog");
      await question.getByText("Sam Lee holds this conversation. Take it over? Sam Lee will be told.").waitFor();
      await docShot(page, "inbox-take-over-confirm.png");
      expect(await axeViolations(page)).toEqual([]);
      await question.getByRole("button", { name: "Cancel" }).click();
      await question.waitFor({ state: "detached" });
      expect(await holder(r, conversation_id)).toBe(r.account.email);

      await page.getByRole("button", { name: "Take over", exact: true }).click();
      await page.getByRole("button", { name: "Take over from Sam Lee" }).click();
      await page.getByText(`Held by Bea Stone (${bea.email})`).waitFor();
      await page.getByTestId("activity").filter({ hasText: "Bea Stone took over from Sam Lee" }).waitFor();
      expect(await holder(r, conversation_id)).toBe(bea.email);
      // Her reply is hers by name, in her console and in Sam's.
      await page.getByLabel(/^Reply to/).fill("We are looking into A-1001 now.");
      await page.getByRole("button", { name: "Send" }).click();
      const byBea = (p: Page) =>
        p.locator(".message--operator", { hasText: "A-1001 now" }).getByTestId("message-author");
      await expect.poll(() => byBea(page).textContent()).toBe("Bea Stone");
      await expect.poll(() => byBea(sam).textContent()).toBe("Bea Stone");

      // Sam, on his open console: told who took it, and his timeline says so too.
      await sam.getByTestId("taken-notice").filter({ hasText: "Bea Stone took over from you" }).waitFor();
      expect(await sam.getByTestId("taken-notice").textContent()).toContain("Ada Lovelace");
      await sam.getByTestId("activity").filter({ hasText: "Bea Stone took over from Sam Lee" }).waitFor();
      await sam.getByText(`Held by Bea Stone (${bea.email})`).waitFor();
      expect(await sam.getByTestId("activity").allTextContents()).toEqual([
        expect.stringContaining("Sam Lee took over from the AI agent"),
        expect.stringContaining("Bea Stone took over from Sam Lee"),
      ]);
      expect(await axeViolations(sam)).toEqual([]);
      await docShot(sam, "inbox-timeline.png");
      await sam.getByRole("button", { name: "Dismiss" }).click();
      await sam.getByTestId("taken-notice").waitFor({ state: "detached" });

      // Bea closes it; at 375 px the line is there too.
      await page.getByRole("button", { name: "Close", exact: true }).click();
      await page.getByTestId("activity").filter({ hasText: "Bea Stone closed the conversation" }).waitFor();
      await page.setViewportSize({ width: 375, height: 800 });
      expect(await axeViolations(page)).toEqual([]);
      await samContext.close();
      await beaContext.close();
    },
    scaled(240_000),
  );
});
