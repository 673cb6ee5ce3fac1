import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 31: axe-core finds no serious or critical violation on any console page, at 1280 px and on a 375 px phone.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const APP = new URL("../../src/console/browser/app.tsx", import.meta.url);

/** A page of the router: where it is, and what to do there before axe looks (open a conversation…). */
interface Visit {
  path: (ids: { chatbotId: string }) => string;
  ready: (page: Page) => Promise<void>;
}

const heading = (name: string | RegExp) => (page: Page) => page.getByRole("heading", { name, level: 1 }).waitFor();

/**
 * Every route of the console's router, by the name the router's source gives it: `case "x"` of its switch, and the
 * sub-pages it tells apart by `parts[n] === "y"`. A route added to the router and not here fails the first test.
 */
const PAGES: Record<string, Visit> = {
  inbox: {
    path: () => "/inbox",
    async ready(page) {
      await page.getByRole("button", { name: /Axe Customer/ }).click();
      await page.getByText("Where is my parcel?").waitFor();
      await page.getByText("Contact details").click();
    },
  },
  me: { path: () => "/me", ready: heading("My settings") },
  password: { path: () => "/password", ready: heading("My settings") },
  profile: { path: () => "/profile", ready: heading("Profile") },
  team: { path: () => "/team", ready: heading("Team") },
  teams: { path: () => "/teams", ready: heading("Teams") },
  audit: { path: () => "/audit", ready: heading("Audit log") },
  reports: { path: () => "/reports", ready: async (page) => void (await page.getByTestId("report").waitFor()) },
  "saved-replies": { path: () => "/saved-replies", ready: heading("Saved replies") },
  mentions: { path: () => "/mentions", ready: heading("Mentions") },
  webhooks: {
    path: () => "/webhooks",
    ready: async (page) => void (await page.getByTestId("webhook-endpoint").first().waitFor()),
  },
  mail: { path: () => "/mail", ready: async (page) => void (await page.getByTestId("mail-pending").waitFor()) },
  chatbots: { path: () => "/chatbots", ready: heading("Chatbots") },
  "chatbots/new": { path: () => "/chatbots/new", ready: heading(/chatbot/i) },
  "chatbots/:id": { path: (i) => `/chatbots/${i.chatbotId}`, ready: heading(/./) },
  "chatbots/:id/embed": { path: (i) => `/chatbots/${i.chatbotId}/embed`, ready: heading(/./) },
  "chatbots/:id/appearance": { path: (i) => `/chatbots/${i.chatbotId}/appearance`, ready: heading(/./) },
  "chatbots/:id/knowledge": {
    path: (i) => `/chatbots/${i.chatbotId}/knowledge`,
    ready: async (page) => void (await page.getByTestId("knowledge-source").first().waitFor()),
  },
  "chatbots/:id/agent": {
    path: (i) => `/chatbots/${i.chatbotId}/agent`,
    ready: async (page) => void (await page.getByTestId("tool").first().waitFor()),
  },
  "chatbots/:id/replay": {
    path: (i) => `/chatbots/${i.chatbotId}/replay`,
    async ready(page) {
      await page.getByRole("button", { name: "Replay", exact: true }).click();
      await page.getByTestId("replay-item").first().waitFor();
    },
  },
  invitation: { path: () => "/invitation", ready: heading(/./) },
  "not found": { path: () => "/no-such-page", ready: heading("Page not found") },
};

/** The routes the router's source names (see PAGES). */
function routerRoutes(): string[] {
  const src = readFileSync(APP, "utf8");
  const top = [...src.matchAll(/case "([\w-]+)":/g)].map((m) => m[1]!);
  const out = new Set<string>(["not found"]);
  for (const t of top) out.add(t);
  if (/path === "\/invitation"/.test(src)) out.add("invitation");
  // The chatbots section's sub-pages: parts[1] a fixed word (new) or an id, parts[2] a word.
  for (const m of src.matchAll(/parts\[1\] === "([\w-]+)"/g)) out.add(`chatbots/${m[1]}`);
  for (const m of src.matchAll(/parts\[2\] === "([\w-]+)"/g)) out.add(`chatbots/:id/${m[1]}`);
  if (/<ChatbotEdit chatbotId=/.test(src)) out.add("chatbots/:id");
  return [...out].sort();
}

/** Waits until no part of the page is still loading. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector(".state--loading, [aria-busy=true]") === null);
}

describe.runIf(canRun)("axe on every console page", () => {
  const fx = consoleForFile();

  beforeAll(async () => {
    // Something on each page: a conversation with a named customer, a webhook endpoint, a source, a tool.
    const t = await issueTokens(fx.s.url, fx.owner, "axe-1", {
      contact_name: "Axe Customer",
      email: "axe@example.com",
    });
    await send(fx.s.url, t.access_token, "Where is my parcel?");
    const auth = { authorization: `Bearer ${await idToken(fx.s.url, fx.owner)}` };
    const hook = await postJson(fx.s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/hooks" }, auth);
    expect(hook.status, JSON.stringify(hook.body)).toBe(200);
    // A knowledge source and a tool, so their pages show a list.
    const bot = `/v1/account/chatbots/${fx.owner.chatbotId}`;
    const snippets = [{ title: "Hours", url: "https://shop.example/hours", snippet: "Open 9 to 5." }];
    const source = await postJson(fx.s.url, `${bot}/knowledge_sources`, { kind: "snippets", snippets }, auth);
    expect(source.status, JSON.stringify(source.body)).toBe(200);
    const tool = { name: "track_order", description: "An order's status.", url: "http://127.0.0.1:9/track" };
    const made = await postJson(fx.s.url, `${bot}/tools`, tool, auth);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // A draft of the agent, so its replay page shows a result.
    const draft = await requestJson(fx.s.url, "PATCH", `${bot}/agent_draft`, auth, { instructions: "Be brief." });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
  });

  test("the list of pages visited is the router's list of routes", () => {
    expect(Object.keys(PAGES).sort()).toEqual(routerRoutes());
  });

  for (const size of [
    { width: 1280, height: 800 },
    { width: 375, height: 740 },
  ])
    test(
      `no serious or critical violation on any page at ${size.width} px`,
      async () => {
        const context = await newContext(fx.browser, size);
        const page = await context.newPage();
        await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
        const found: Record<string, string[]> = {};
        for (const [name, visit] of Object.entries(PAGES)) {
          await page.goto(`${fx.s.url}/console${visit.path({ chatbotId: fx.owner.chatbotId })}`);
          await visit.ready(page);
          await settled(page);
          const v = await axeViolations(page);
          if (v.length) found[name] = v;
        }
        await context.close();
        expect(found).toEqual({});
        // Every page of the console, one after the other: more than the default 30 s on a busy machine.
      },
      scaled(120_000),
    );
});
