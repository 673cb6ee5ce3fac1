import { mkdirSync } from "node:fs";
import type { Frame, Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import type { ChatbotRecord } from "../../src/domain/account/repository.js";
import type { Agent, AgentEvent, AgentTurn } from "../../src/domain/agent/agent.js";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { contacts, idToken } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, newContext, typeMessage } from "./browser.js";

// Issue 43, item 7 (newcomer bugs on the frame): the away line folds once a person answers; the composer names who
// it writes to after a take-over; after the agent failed, "Try again" asks for the answer to the same stored message,
// and the same text typed again is not stored twice.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

/** An agent that fails the first time it is asked each question listed in `failing`, and else echoes it. */
class FlakyAgent implements Agent {
  readonly failing = new Set<string>();
  readonly asked: string[] = [];
  async *reply(_c: ChatbotRecord, history: AgentTurn[]): AsyncIterable<AgentEvent> {
    const question = history.filter((t) => t.role === "user").at(-1)?.content ?? "";
    this.asked.push(question);
    if (this.failing.delete(question)) throw new Error("the model is overloaded");
    yield { type: "delta", text: "Answer to: " };
    yield { type: "done", content: `Answer to: ${question}`, documents: [], toolCalls: "" };
  }
}

const agent = new FlakyAgent();
// SCREENSHOTS=<folder>: each case's frame at 375 and 1280 px is saved there, to be looked at.
const shots = process.env.SCREENSHOTS ? `${process.env.SCREENSHOTS.replace(/\/$/, "")}/` : undefined;

const fx = embeddingForFile(canRun, { overrides: { agent } });

async function operator() {
  const token = await idToken(fx.e.service.url, fx.e.account);
  const auth = { authorization: `Bearer ${token}` };
  return {
    auth,
    post: async (path: string, body: unknown) => {
      const r = await postJson(fx.e.service.url, path, body, auth);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      return r.body;
    },
    /** The latest conversation of the newest contact. */
    latestConversation: async () =>
      (await contacts(fx.e.service.url, token, fx.e.account.email)).body.data.data.contacts[0]
        .latest_conversation_id as string,
    contents: async (conversationId: string) =>
      (
        await getJson(
          fx.e.service.url,
          "/get_messages_for_conversation",
          { conversation_id: conversationId, limit: 100 },
          auth,
        )
      ).body.messages.map((m: { content: string }) => m.content) as string[],
  };
}

/**
 * Noon UTC (13:00 in Berlin) of the first Saturday at least a day after now: outside the weekday office hours, and
 * later than every message the file stored before, so that its contact is the newest. (A fixed Saturday became a
 * Saturday past on its own day, and the newest contact was then another one.)
 */
function saturdayToCome(): number {
  const d = new Date(Date.now() + 86_400_000);
  while (d.getUTCDay() !== 6) d.setUTCDate(d.getUTCDate() + 1);
  return d.setUTCHours(12, 0, 0, 0);
}

/** Opens the host page at a viewport width; returns the page and its chat frame. */
async function open(width: number): Promise<{ page: Page; frame: Frame; close: () => Promise<void> }> {
  const context = await newContext(fx.browser, { width, height: width < 600 ? 700 : 720 });
  const page = await context.newPage();
  await page.goto(`${fx.e.host.url}/`);
  const frame = await chatFrame(page);
  await frame.locator("html[data-state=ready]").waitFor();
  return { page, frame, close: () => context.close() };
}

async function shoot(page: Page, name: string): Promise<void> {
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}${name}.png`, animations: "disabled" });
}

describe.runIf(canRun)("the frame recovers and follows who answers", () => {
  test("after a take-over the composer writes to the person, and to the assistant again once released", async () => {
    const { page, frame, close } = await open(1280);
    expect(await frame.getByLabel("Message to Shop assistant").count()).toBe(1);
    await typeMessage(frame, "Can a person help me?");
    await frame.locator(".msg--assistant", { hasText: "Can a person help me?" }).waitFor();
    const op = await operator();
    const id = await op.latestConversation();
    await op.post("/take_over_conversation", { conversation_id: id, operator_name: "Sam" });
    await frame.locator("#title", { hasText: /^Sam$/ }).waitFor();
    await frame.getByLabel("Message to Sam").waitFor();
    expect(await frame.getByLabel("Message to Shop assistant").count()).toBe(0);
    await shoot(page, "frame-composer-operator-1280");
    await op.post("/release_conversation", { conversation_id: id });
    await frame.getByLabel("Message to Shop assistant").waitFor();
    await close();
  });

  test.each([375, 1280])(
    "after the agent failed, Try again answers the same stored question (%i px)",
    async (width) => {
      const { page, frame, close } = await open(width);
      const question = `Where is my parcel? (${width})`;
      agent.failing.add(question);
      await typeMessage(frame, question);
      const failure = frame.locator(".msg--error", { hasText: "please try again" });
      await failure.waitFor();
      const retry = failure.getByRole("button", { name: "Try again" });
      await retry.waitFor();
      await shoot(page, `frame-retry-${width}`);
      await retry.click();
      await frame.locator(".msg--assistant", { hasText: `Answer to: ${question}` }).waitFor();
      expect(await frame.locator(".msg--error").count()).toBe(0);
      const op = await operator();
      const id = await op.latestConversation();
      // The question once, its answer once; the agent was asked twice.
      expect((await op.contents(id)).filter((c) => c === question)).toHaveLength(1);
      expect((await op.contents(id)).filter((c) => c === `Answer to: ${question}`)).toHaveLength(1);
      expect(agent.asked.filter((q) => q === question)).toHaveLength(2);
      expect(await frame.locator(".msg--user", { hasText: question }).count()).toBe(1);
      await close();
    },
  );

  test("after the agent failed, the same text typed again is the same stored question, answered", async () => {
    const { frame, close } = await open(1280);
    const question = "What does shipping cost?";
    agent.failing.add(question);
    await typeMessage(frame, question);
    await frame.locator(".msg--error", { hasText: "please try again" }).waitFor();
    // The customer types it again instead of pressing the button.
    await typeMessage(frame, question);
    await frame.locator(".msg--assistant", { hasText: `Answer to: ${question}` }).waitFor();
    const op = await operator();
    const id = await op.latestConversation();
    expect((await op.contents(id)).filter((c) => c === question)).toHaveLength(1);
    expect(await frame.locator(".msg--user", { hasText: question }).count()).toBe(1);
    expect(await frame.locator(".msg--error").count()).toBe(0);
    // Typed once more after the answer: a new question, stored as one.
    await typeMessage(frame, question);
    await frame
      .locator(".msg--assistant", { hasText: `Answer to: ${question}` })
      .nth(1)
      .waitFor();
    expect((await op.contents(id)).filter((c) => c === question)).toHaveLength(2);
    await close();
  });
  test.each([375, 1280])("outside office hours, the away line folds once a person answers (%i px)", async (width) => {
    // Last in the file: its messages are stored on a Saturday to come, and its contact is listed first from then on.
    let op = await operator();
    // Office hours on weekdays, and the service's clock on a Saturday: the team is away.
    const hours = {
      time_zone: "Europe/Berlin",
      intervals: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, open: "09:00", close: "17:00" })),
    };
    const set = await requestJson(
      fx.e.service.url,
      "PATCH",
      `/v1/account/chatbots/${fx.e.account.chatbotId}`,
      op.auth,
      {
        appearance: { office_hours: hours },
      },
    );
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    fx.e.service.clock.freezeAt(saturdayToCome() + width * 1000);
    // An ID token of the service's (frozen) present.
    op = await operator();
    try {
      const { page, frame, close } = await open(width);
      const away = frame.locator("#away");
      await away.waitFor();
      await typeMessage(frame, `Is anyone there? ${width}`);
      await frame.locator(".msg--assistant", { hasText: `Is anyone there? ${width}` }).waitFor();
      const logTop = async () => (await frame.locator("#log").boundingBox())!.y;
      const before = await logTop();
      const bannerHeight = (await away.boundingBox())!.height;
      await shoot(page, `frame-away-before-${width}`);

      const id = await op.latestConversation();
      await op.post("/take_over_conversation", { conversation_id: id, operator_name: "Sam" });
      await op.post("/reply_to_conversation", { conversation_id: id, content: "Sam here, I am in today." });
      await frame.locator(".msg--operator", { hasText: "Sam here" }).waitFor();
      // Folded: no longer shown, and the log takes its place at the top.
      await away.waitFor({ state: "hidden" });
      expect(await logTop()).toBeLessThanOrEqual(before - bannerHeight + 1);
      await shoot(page, `frame-away-folded-${width}`);
      await op.post("/release_conversation", { conversation_id: id });

      // Loaded again later: a conversation a person answered shows no away line either.
      await page.reload();
      const again = await chatFrame(page);
      await again.locator("html[data-state=ready]").waitFor();
      expect(await again.locator("#away").isHidden()).toBe(true);
      await close();
    } finally {
      fx.e.service.clock.freezeAt(Date.now());
      fx.e.service.clock.resume();
      // The team in all day, every day, for the cases after this one.
      const always = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, open: "00:00", close: "23:59" }));
      await requestJson(fx.e.service.url, "PATCH", `/v1/account/chatbots/${fx.e.account.chatbotId}`, op.auth, {
        appearance: { office_hours: { time_zone: "UTC", intervals: always } },
      });
    }
  });
});
