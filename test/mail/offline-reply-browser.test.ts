// The reply mail's link, followed in Chromium: apart from offline-reply.test.ts, whose other cases also run on
// PostgreSQL and need no browser.
import { describe, expect, it } from "vitest";
import { chatFrame, launchBrowser, newContext } from "../frame/browser.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { waitFor } from "../helpers/time-scale.js";
import { closedAfterEach, conversationWithReply, due, linkOf, operatorMail, startMailServer } from "./mail-fixture.js";
import { startSmtpSink } from "./smtp-sink.js";

/** The service and the relay of the test running, closed after it. */
const live = closedAfterEach();

describe("in Chromium", () => {
  const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
  it.skipIf(!canRun)("the mail's link opens the conversation in a fresh browser, with the answer, once", async () => {
    live.sink = await startSmtpSink();
    const s = (live.server = await startMailServer(live.sink.port));
    await conversationWithReply(s);
    await due(s);
    await waitFor("the reply arrives", () => operatorMail(live.sink!.received).length === 1);
    const link = linkOf(operatorMail(live.sink.received)[0]!);
    const browser = await launchBrowser();
    try {
      const first = await (await newContext(browser)).newPage();
      await first.goto(link);
      const frame = await chatFrame(first);
      await frame.getByText("It ships tomorrow", { exact: false }).first().waitFor();
      expect(await frame.locator("body").textContent()).toContain("Where is my parcel?");
      // The same link in another fresh browser: used up, the answer is not shown.
      const second = await (await newContext(browser)).newPage();
      const framed = second.waitForResponse((r) => r.url().includes("/chatbot-iframe/"));
      expect((await second.goto(link))?.status()).toBe(200);
      expect((await framed).status()).toBe(403);
      const inner = await (await second.waitForSelector("iframe")).contentFrame();
      await inner!.waitForLoadState();
      expect(await inner!.locator("body").textContent()).not.toContain("It ships tomorrow");
    } finally {
      await browser.close();
    }
  });
});
