import type { Frame } from "playwright-core";
import { describe, expect, test } from "vitest";
import { embeddingForFile } from "../helpers/browser-fixtures.js";
import { contacts, idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { openCustomerFrame, typeMessage } from "./browser.js";

// Issue 31, item 1: an operator's reply arrived in the frame but the log stayed scrolled up, the reply below the fold.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const fx = embeddingForFile(canRun);

/** How many pixels of the log lie below what is visible. */
const hiddenBelow = (frame: Frame) =>
  frame.locator("#log").evaluate((log) => log.scrollHeight - log.scrollTop - log.clientHeight);

describe.runIf(canRun)("the customer's frame follows the conversation", () => {
  test("after three messages and a take-over, the operator's long reply is scrolled into view", async () => {
    const { context, frame } = await openCustomerFrame(fx.browser, fx.e.host.url);
    for (const [i, text] of ["Hello", "How long does shipping take?", "Can I return an item?"].entries()) {
      await typeMessage(frame, text);
      await frame.locator(".msg--assistant").nth(i).waitFor();
    }
    const token = await idToken(fx.e.service.url, fx.e.account);
    const auth = { authorization: `Bearer ${token}` };
    const id = (await contacts(fx.e.service.url, token, fx.e.account.email)).body.data.data.contacts[0]
      .latest_conversation_id;
    expect(
      (await postJson(fx.e.service.url, "/take_over_conversation", { conversation_id: id, operator_name: "Sam" }, auth))
        .status,
    ).toBe(200);
    await frame.locator(".msg--event", { hasText: "Sam from Shop assistant has joined" }).waitFor();
    // The customer was at the end of the log when the reply came.
    expect(await hiddenBelow(frame)).toBeLessThan(2);

    const reply = [
      "Hi, I'm Sam from the support team. I have looked at your order and the parcel is with the carrier.",
      "It should arrive tomorrow before noon; if it does not, write here and I will send a replacement at once.",
      "You can also return anything within 30 days, and the return label is free.",
    ].join(" ");
    expect(
      (await postJson(fx.e.service.url, "/reply_to_conversation", { conversation_id: id, content: reply }, auth))
        .status,
    ).toBe(200);
    const shown = frame.locator(".msg--operator", { hasText: "before noon" });
    await shown.waitFor();
    // The whole reply is in view: the log scrolled down to it (it never scrolls by itself afterwards).
    await frame.waitForFunction(
      () => {
        const log = document.getElementById("log")!;
        return log.scrollHeight - log.scrollTop - log.clientHeight < 2;
      },
      undefined,
      { timeout: 2000 },
    );
    const [logBox, replyBox] = await Promise.all([frame.locator("#log").boundingBox(), shown.boundingBox()]);
    expect(replyBox!.y + replyBox!.height).toBeLessThanOrEqual(logBox!.y + logBox!.height + 1);
    await context.close();
  });
});
