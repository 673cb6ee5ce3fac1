import type { BrowserContext } from "playwright-core";
import { describe, expect } from "vitest";
import { newContext } from "../frame/browser.js";
import { type ConsoleRun, consoleOnBothBackends } from "../helpers/console-instances.js";
import { addNoteMentioning } from "../helpers/console-notes.js";
import { addChatbot, addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled, waitFor } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { docShot } from "./doc-shot.js";
import { signIn } from "./sign-in.js";

// Issue 45's routing in real Chromium, a day of three operators in two teams: the admin makes the teams on the Teams
// page (members, chatbots, balanced assignment with capacity 1); Bea sets herself Away in the top bar, so the first
// handover goes to Sam (Lee, offline, is skipped); back Available, Bea gets the second; the third waits (both full).
// Sam and Bea open the same conversation and each sees "… is viewing" until the other leaves; Sam mentions Bea in a
// note and she is told live; Kim, of the Billing team, sees only the Billing chatbot's conversation. Once on one
// SQLite instance, once on two instances over one PostgreSQL database (Sam on the first, Bea and Kim on the second).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const runs = await consoleOnBothBackends(canRun);
const HANDOVER = "I want to talk to a person please";

async function playDay(d: ConsoleRun): Promise<void> {
  const contexts: BrowserContext[] = [];
  const pageAt = async (width = 1280) => {
    const c = await newContext(d.browser, { width, height: 800 });
    contexts.push(c);
    return c.newPage();
  };
  try {
    const owner = await idToken(d.one, d.account);
    const authA = { authorization: `Bearer ${owner}` };
    const people = await Promise.all(
      ["sam", "bea", "lee", "kim"].map((n) => addMember(d.one, owner, `${n}@routing-day.example`)),
    );
    const [sam, bea, lee, kim] = people as [
      (typeof people)[0],
      (typeof people)[0],
      (typeof people)[0],
      (typeof people)[0],
    ];
    for (const [p, name] of [
      [sam, "Sam"],
      [bea, "Bea"],
      [lee, "Lee"],
      [kim, "Kim"],
    ] as const)
      await postJson(d.one, "/v1/account/profile", { display_name: name }, { authorization: `Bearer ${p.idToken}` });
    const billingId = await addChatbot(d.one, authA, "Billing desk");
    const chatbots = (await getJson(d.one, "/v1/account/chatbots", {}, authA)).body.data.chatbots;
    const mainName = chatbots.find((c: { chatbot_id: string }) => c.chatbot_id === d.account.chatbotId).name;

    // The admin makes two teams on the Teams page.
    const admin = await pageAt();
    await signIn(admin, d.one, d.account.email, d.account.password);
    await admin.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Team", exact: true }).click();
    await admin.getByRole("navigation", { name: "Team pages" }).getByRole("link", { name: "Teams" }).click();
    await admin.getByRole("heading", { name: "Teams", level: 1 }).waitFor();
    const addTeam = async (name: string) => {
      await admin.getByLabel("New team's name").fill(name);
      await admin.getByRole("button", { name: "Add team" }).click();
      const card = admin.getByTestId("team").filter({ has: admin.getByRole("heading", { name, exact: true }) });
      await card.waitFor();
      return card;
    };
    const support = await addTeam("Support");
    for (const p of [sam, bea, lee]) await support.getByLabel(new RegExp(p.email)).check();
    await support.getByLabel(mainName).check();
    await support.getByLabel("Assignment").selectOption("balanced");
    await support.getByLabel("Capacity per member").fill("1");
    await support.getByRole("button", { name: "Save Support" }).click();
    await support.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const billingTeam = await addTeam("Billing");
    await billingTeam.getByLabel(/kim@routing-day/).check();
    // The main chatbot is Support's: offered, but not to be taken.
    const taken = billingTeam.getByRole("checkbox", { name: new RegExp(mainName) });
    expect(await taken.isDisabled()).toBe(true);
    await billingTeam.getByText("(given to Support)").waitFor();
    await billingTeam.getByLabel("Billing desk").check();
    await billingTeam.getByRole("button", { name: "Save Billing" }).click();
    await billingTeam.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    // A second team by a taken name is refused, clearly, and nothing changes; a deleted team asks first.
    await admin.getByLabel("New team's name").fill("support");
    await admin.getByRole("button", { name: "Add team" }).click();
    await admin.getByRole("form", { name: "New team" }).getByRole("alert").waitFor();
    const temp = await addTeam("Temporary");
    admin.once("dialog", (dlg) => void dlg.accept());
    await temp.getByRole("button", { name: "Delete Temporary" }).click();
    await temp.waitFor({ state: "detached" });
    await admin.evaluate(() => scrollTo(0, 0));
    await docShot(admin, "routing-teams.png");
    const teams = (await getJson(d.one, "/v1/account/teams", {}, authA)).body.data.teams;
    expect(teams.map((t: { name: string }) => t.name)).toEqual(["Billing", "Support"]);
    expect(teams[1]).toMatchObject({ assignment: "balanced", capacity: 1, chatbot_ids: [d.account.chatbotId] });
    expect(teams[1].member_ids).toHaveLength(3);
    expect(teams[0]).toMatchObject({ chatbot_ids: [billingId], member_ids: [kim.memberId] });
    // axe on the Teams page, wide and on a phone.
    for (const width of [1280, 375, 1280]) {
      await admin.setViewportSize({ width, height: 800 });
      expect(await axeViolations(admin), `Teams at ${width} px`).toEqual([]);
    }

    // Sam (first instance) and Bea (second) open the inbox: online. Bea sets herself away in the top bar.
    const samPage = await pageAt();
    await signIn(samPage, d.one, sam.email, sam.password);
    const beaPage = await pageAt();
    await signIn(beaPage, d.two, bea.email, bea.password);
    await beaPage.getByLabel("Your availability").selectOption("away");
    await beaPage.locator("#availability[data-away=true]:enabled").waitFor();
    await docShot(beaPage.locator("header.topbar"), "routing-availability.png");
    const beaAuth = { authorization: `Bearer ${bea.idToken}` };
    expect((await getJson(d.two, "/v1/account/availability", {}, beaAuth)).body.data).toEqual({ away: true });

    const holder = async (conversationId: string) =>
      (
        await getJson(d.one, "/list_conversation_activity", { conversation_id: conversationId }, authA)
      ).body.data.activities
        .filter((l: { kind: string }) => l.kind === "assigned")
        .map((l: { to_email: string }) => l.to_email);
    const handOver = async (user: string, name: string, chatbotId = d.account.chatbotId) => {
      const t = await issueTokens(d.one, { ...d.account, chatbotId }, user, { contact_name: name });
      return (await send(d.one, t.access_token, HANDOVER)).conversation_id;
    };
    // Bea away, Lee offline: the first handover goes to Sam, and shows under his Mine.
    const first = await handOver("ada", "Ada");
    await waitFor("the first handover assigned", async () => (await holder(first)).length === 1);
    expect(await holder(first)).toEqual([sam.email]);
    await samPage.getByRole("group", { name: "Whose conversations" }).getByRole("button", { name: "Mine" }).click();
    await samPage.locator(".contact", { hasText: "Ada" }).waitFor();
    // Bea is back: the second goes to her (Sam holds one, his capacity); the third waits, both full.
    await beaPage.getByLabel("Your availability").selectOption("available");
    await beaPage.locator("#availability[data-away=false]:enabled").waitFor();
    const second = await handOver("bo", "Bo");
    await waitFor("the second handover assigned", async () => (await holder(second)).length === 1);
    expect(await holder(second)).toEqual([bea.email]);
    const third = await handOver("cy", "Cy");
    // The Billing chatbot's customer, for Kim.
    await handOver("dee", "Dee", billingId);
    await waitFor("the Billing conversation listed", async () => {
      const r = await getJson(d.one, "/get_contact_conversations", { user_email_id: d.account.email }, authA);
      return JSON.stringify(r.body).includes("Dee");
    });
    expect(await holder(third)).toEqual([]);
    expect(await holder(first)).not.toContain(lee.email);

    // Sam and Bea both open Cy's conversation (Unassigned): each sees the other viewing.
    for (const p of [samPage, beaPage]) {
      await p.getByRole("group", { name: "Whose conversations" }).getByRole("button", { name: "Unassigned" }).click();
      await p.locator(".contact", { hasText: "Cy" }).click();
    }
    await samPage.getByTestId("others-viewing").filter({ hasText: "Bea is viewing" }).waitFor();
    await beaPage.getByTestId("others-viewing").filter({ hasText: "Sam is viewing" }).waitFor();
    await docShot(samPage, "routing-viewing.png");
    // Sam mentions Bea in a note: her menu's count tells her at once.
    await addNoteMentioning(samPage, "Bea", "this one is yours after lunch, ROUTING-9");
    await beaPage.getByTestId("mentions-count").filter({ hasText: "1" }).waitFor();
    // Bea leaves for her mentions: Sam no longer sees her viewing.
    await beaPage.getByRole("link", { name: /^Mentions/ }).click();
    await beaPage.getByTestId("mention").filter({ hasText: "ROUTING-9" }).waitFor();
    await samPage.waitForFunction(() => document.querySelector("[data-testid=others-viewing]")?.textContent === "");

    // Kim (Billing, second instance) sees the Billing desk's conversation and none of Support's chatbot.
    const kimPage = await pageAt();
    await signIn(kimPage, d.two, kim.email, kim.password);
    await kimPage.getByRole("group", { name: "Whose conversations" }).getByRole("button", { name: "All" }).click();
    await kimPage.locator(".contact", { hasText: "Dee" }).waitFor();
    const listed = await kimPage.locator(".contact").allTextContents();
    expect(listed).toHaveLength(1);
    expect(listed.join(" ")).not.toMatch(/Ada|Bo|Cy/);
  } finally {
    await Promise.all(contexts.map((c) => c.close()));
  }
}

describe.runIf(canRun)("a routing day of three operators in two teams", () => {
  // On PostgreSQL the admin and Sam are on the first instance, Bea and Kim on the second.
  runs.twice("the day", playDay, scaled(180_000));
});
