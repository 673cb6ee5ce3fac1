import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, test } from "vitest";
import { newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { signIn } from "./sign-in.js";

// Issue 32, item 5: the Reports page shows GetReport's figures, charts with their numbers as tables, and a CSV.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const DOCS = new URL("../../docs/", import.meta.url);

describe.runIf(canRun)("the Reports page", () => {
  const fx = consoleForFile();

  beforeAll(async () => {
    // Five conversations today: two handed over (a person replies), two closed and rated.
    const auth = { authorization: `Bearer ${await idToken(fx.s.url, fx.owner)}` };
    for (let i = 0; i < 5; i++) {
      const t = await issueTokens(fx.s.url, fx.owner, `reports-${i}`);
      const id = (await send(fx.s.url, t.access_token, `Question ${i}`)).conversation_id;
      if (i < 2) {
        expect((await postJson(fx.s.url, "/take_over_conversation", { conversation_id: id }, auth)).status).toBe(200);
        const reply = { conversation_id: id, content: "A person here." };
        expect((await postJson(fx.s.url, "/reply_to_conversation", reply, auth)).status).toBe(200);
      }
      if (i >= 3) {
        expect((await postJson(fx.s.url, "/close_conversation", { conversation_id: id }, auth)).status).toBe(200);
        const rate = `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`;
        expect((await postJson(fx.s.url, rate, { conversation_id: id, score: i })).status).toBe(200);
      }
    }
  });

  test("shows the figures, a table behind each chart, and downloads them as CSV", async () => {
    const context = await newContext(fx.browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
    await page.goto(`${fx.s.url}/console/reports`);
    const report = page.getByTestId("report");
    await report.waitFor();
    const summary = report.locator(".report-summary");
    await expect.poll(() => summary.textContent()).toContain("Conversations5");
    expect(await summary.textContent()).toContain("Handed over to the team2 (40%)");
    expect(await summary.textContent()).toContain("2, average 3.50 of 5");
    // Each chart's numbers are a table (for screen readers, and on demand for everyone).
    await page.getByText("Ratings by score: the numbers").click();
    const ratingRows = page.getByRole("table", { name: "Ratings by score" }).locator("tbody tr");
    expect(await ratingRows.allTextContents()).toEqual(["1 of 50", "2 of 50", "3 of 51", "4 of 51", "5 of 50"]);
    if (process.env.UPDATE_DOCS === "1")
      await page.screenshot({ path: new URL("console-reports.png", DOCS).pathname, fullPage: true });

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    const csv = readFileSync((await download.path())!, "utf8");
    expect(csv).toContain("conversations,5\r\n");
    expect(csv).toContain("handed_over,2\r\n");
    expect(csv).toContain("ratings_average,3.5\r\n");

    // A chatbot with no conversation: no data is "—", never "0 s", in the page; an empty cell in the CSV.
    await fx.s.app.accounts.createChatbot(fx.owner.email, "Quiet bot", ["https://shop.example"], []);
    await page.reload();
    await page.getByLabel("Chatbot").selectOption({ label: "Quiet bot" });
    await expect.poll(() => summary.textContent()).toContain("Conversations0");
    expect(await report.getByTestId("time-to-close").textContent()).toBe("—");
    expect(await report.getByTestId("first-response").textContent()).toBe("—");
    expect(await summary.textContent()).not.toContain("0 s");
    expect(await summary.textContent()).not.toContain("0%");
    const [quiet] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    const empty = readFileSync((await quiet.path())!, "utf8");
    expect(empty).toContain("time_to_close_count,0\r\ntime_to_close_median_seconds,\r\n");
    expect(empty).toContain("ratings_average,\r\n");
    await context.close();
  });
});
