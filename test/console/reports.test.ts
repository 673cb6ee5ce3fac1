import { beforeAll, describe, expect, test } from "vitest";
import { downloaded, newContext } from "../frame/browser.js";
import { consoleForFile } from "../helpers/browser-fixtures.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { axeViolations } from "./axe.js";
import { signIn } from "./sign-in.js";

// Issue 32, item 5: the Reports page shows GetReport's figures, charts with their numbers as tables, and a CSV.
// Issue 45, item 6: By operator and By team show GetOperatorReport's figures, "—" where nothing was measured.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const DOCS = new URL("../../docs/", import.meta.url);

describe.runIf(canRun)("the Reports page", () => {
  const fx = consoleForFile();

  beforeAll(async () => {
    // Five conversations today: two handed over (a person replies within the 5 minutes' SLA), two closed and rated.
    const auth = { authorization: `Bearer ${await idToken(fx.s.url, fx.owner)}` };
    const sla = { first_response_sla_minutes: 5 };
    expect((await requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.owner.chatbotId}`, auth, sla)).status).toBe(
      200,
    );
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
    const csv = await downloaded(download);
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
    const empty = await downloaded(quiet);
    expect(empty).toContain("time_to_close_count,0\r\ntime_to_close_median_seconds,\r\n");
    expect(empty).toContain("ratings_average,\r\n");
    await context.close();
  });

  test("By operator and By team: each person's and team's figures, '—' for none, a CSV, no axe finding at 1280 and 375 px", async () => {
    const auth = { authorization: `Bearer ${await idToken(fx.s.url, fx.owner)}` };
    const people = (await getJson(fx.s.url, "/v1/account/people", {}, auth)).body.data.people as {
      member_id: string;
      email: string;
    }[];
    const owner = people.find((p) => p.email.toLowerCase() === fx.owner.email.toLowerCase())!;
    const day = { name: "Day shift", member_ids: [owner.member_id] };
    expect((await postJson(fx.s.url, "/v1/account/teams", day, auth)).status).toBe(200);
    expect((await postJson(fx.s.url, "/v1/account/teams", { name: "Night shift" }, auth)).status).toBe(200);

    for (const size of [
      { width: 1280, height: 800 },
      { width: 375, height: 740 },
    ]) {
      const context = await newContext(fx.browser, size);
      const page = await context.newPage();
      await signIn(page, fx.s.url, fx.owner.email, fx.owner.password);
      await page.goto(`${fx.s.url}/console/reports`);
      await page.getByRole("radio", { name: "By operator" }).check();
      const report = page.getByTestId("people-report");
      const row = report.getByRole("row").filter({ hasText: fx.owner.email });
      await row.waitFor();
      // The owner took two conversations over and replied in each, in time; closed none while holding them; none rated.
      expect(await row.locator("td").first().textContent()).toBe("2");
      expect(await row.getByTestId("sla").textContent()).toBe("2 / 0");
      expect(await row.getByTestId("first-response").textContent()).not.toBe("—");
      expect(await row.getByTestId("resolution").textContent()).toBe("—");
      expect(await row.getByTestId("ratings").textContent()).toBe("—");
      expect(await row.getByTestId("csat").textContent()).toBe("—");
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(
        0,
      );
      expect(await axeViolations(page), `by operator at ${size.width}`).toEqual([]);
      if (size.width === 1280 && process.env.UPDATE_DOCS === "1")
        await page.screenshot({ path: new URL("console-reports-operators.png", DOCS).pathname, fullPage: true });

      if (size.width === 1280) {
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          report.getByRole("button", { name: "Download CSV" }).click(),
        ]);
        const csv = await downloaded(download);
        const line = csv.split("\r\n").find((l) => l.startsWith("operator,") && l.includes(fx.owner.email))!;
        // conversations 2, two first responses; no resolution, rating or CSAT measured: empty cells, never 0; two
        // SLA hits, no breach.
        expect(line.split(",").slice(4, 6)).toEqual(["2", "2"]);
        expect(line.split(",").slice(8)).toEqual(["0", "", "", "0", "", "", "2", "0"]);
        expect(csv).toContain("team,");
      }

      await page.getByRole("radio", { name: "By team" }).check();
      const night = report.getByRole("row").filter({ hasText: "Night shift" });
      await night.waitFor();
      expect(await night.locator("td").first().textContent()).toBe("0");
      for (const id of ["first-response", "resolution", "ratings", "csat", "sla"])
        expect(await night.getByTestId(id).textContent()).toBe("—");
      const dayRow = report.getByRole("row").filter({ hasText: "Day shift" });
      expect(await dayRow.locator("td").first().textContent()).toBe("2");
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(
        0,
      );
      expect(await axeViolations(page), `by team at ${size.width}`).toEqual([]);
      await context.close();
    }
  });
});
