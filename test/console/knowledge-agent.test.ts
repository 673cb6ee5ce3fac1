import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { launchBrowser, newContext } from "../frame/browser.js";
import { addMember, idToken } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import type { TestAccount, TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";
import { axeViolations } from "./axe.js";
import { docShot } from "./doc-shot.js";
import { signIn, startConsoleServer } from "./sign-in.js";

// Issues 42 and 43 in the console: a chatbot's Knowledge page (sources, their indexing, a question tried against
// them) and its Agent page (name, instructions, handover rules, daily budget, tools with a secret shown once).

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

const overflows = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

describe.runIf(canRun)("a chatbot's knowledge and agent pages", () => {
  let browser: Browser;
  let s: TestServer;
  let owner: TestAccount;
  let auth: { authorization: string };

  beforeAll(async () => {
    [browser, s] = await Promise.all([launchBrowser(), startConsoleServer()]);
    owner = await s.account();
    auth = { authorization: `Bearer ${await idToken(s.url, owner)}` };
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close(true);
  });

  const sources = async () =>
    (await getJson(s.url, `/v1/account/chatbots/${owner.chatbotId}/knowledge_sources`, {}, auth)).body.data.sources as {
      title: string;
      status: string;
    }[];
  const tools = async () =>
    (await getJson(s.url, `/v1/account/chatbots/${owner.chatbotId}/tools`, {}, auth)).body.data.tools as Record<
      string,
      unknown
    >[];

  test(
    "text and a file are indexed, the try box cites their passages, resync and delete work",
    async () => {
      const context = await newContext(browser, { width: 1280, height: 900 });
      const page = await context.newPage();
      // Each confirm() answered as the test says, its question kept.
      const confirmed = (accept: boolean) =>
        new Promise<string>((resolve) =>
          page.once("dialog", (d) => {
            resolve(d.message());
            void (accept ? d.accept() : d.dismiss());
          }),
        );
      await signIn(page, s.url, owner.email, owner.password);
      await page.getByRole("link", { name: "Chatbots" }).click();
      await page.getByRole("link", { name: "Knowledge of Test bot" }).click();
      await page.getByRole("heading", { name: "Knowledge of Test bot", level: 1 }).waitFor();
      await page.getByText("No sources yet").waitFor();

      // Text typed in: Markdown, its title given.
      await page.getByLabel("Title").fill("Kettle refunds");
      await page
        .getByLabel("Text", { exact: true })
        .fill("# Refunds\n\nA broken kettle is refunded within 12 days of its return reaching our warehouse.");
      await page.getByRole("button", { name: "Add source" }).click();
      const text = page.getByTestId("knowledge-source").filter({ hasText: "Kettle refunds" });
      await text.and(page.locator("[data-status=indexed]")).waitFor({ timeout: scaled(20_000) });
      expect(Number(await text.getByTestId("knowledge-chunks").textContent())).toBeGreaterThan(0);
      expect(await text.textContent()).not.toContain("not yet");

      // A file uploaded: its title is its own heading's or name's.
      await page.getByLabel("What to add").selectOption("file");
      await page.getByLabel("File", { exact: true }).setInputFiles({
        name: "warranty.md",
        mimeType: "text/markdown",
        // Larger than an ordinary request body (64 KiB): the upload's own limit (8 MiB) applies.
        buffer: Buffer.from(
          `# Warranty\n\n## Toasters\n\nEvery toaster carries a warranty of 37 months.\n${Array.from(
            { length: 1500 },
            (_, i) => `\n## Shelf ${i}\n\nShelf ${i} of aisle ${i % 40} holds item number ${i * 7}.\n`,
          ).join("")}`,
        ),
      });
      await page.getByRole("button", { name: "Add source" }).click();
      await expect.poll(async () => (await sources()).length).toBe(2);
      await page
        .locator("[data-testid=knowledge-source][data-status=indexed]")
        .nth(1)
        .waitFor({
          timeout: scaled(20_000),
        });

      // A file that cannot be read fails, with the reason beside it.
      await page.getByLabel("File", { exact: true }).setInputFiles({
        name: "manual.pdf",
        mimeType: "application/pdf",
        buffer: Buffer.from("%PDF-1.7\nthis is not really a PDF\n"),
      });
      await page.getByRole("button", { name: "Add source" }).click();
      const broken = page.getByTestId("knowledge-source").filter({ hasText: "manual.pdf" });
      await broken.and(page.locator("[data-status=failed]")).waitFor({ timeout: scaled(20_000) });
      expect((await broken.getByTestId("knowledge-reason").textContent())?.length).toBeGreaterThan(10);

      // The try box searches as the agent does (SearchKnowledge): the passages with their scores and sources, and
      // whether the agent would answer.
      await page.getByLabel("Question", { exact: true }).fill("How many days until my broken kettle is refunded?");
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      const passage = page.getByTestId("try-passage").first();
      await passage.waitFor();
      expect(await passage.textContent()).toContain("Kettle refunds");
      expect(await passage.textContent()).toContain("12 days");
      expect(await passage.textContent()).toMatch(/score (0\.[5-9]\d|1\.00)/);
      expect(await page.getByTestId("try-verdict").getAttribute("data-answers")).toBe("true");
      await page.getByLabel("Question", { exact: true }).fill("How long is the warranty of a toaster?");
      await page.getByRole("button", { name: "Ask", exact: true }).click();
      await page.getByTestId("try-passage").filter({ hasText: "37 months" }).waitFor();
      expect(await page.getByTestId("try-passage").first().textContent()).toMatch(/Warranty|warranty\.md/);
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      await docShot(page, "console-knowledge.png", true);

      // Resync queues it again and it comes back indexed; delete asks first, and it is gone.
      await text.getByRole("button", { name: "Resync Kettle refunds" }).click();
      await text.and(page.locator("[data-status=indexed]")).waitFor({ timeout: scaled(20_000) });
      let asked = confirmed(false);
      await text.getByRole("button", { name: "Delete Kettle refunds" }).click();
      expect(await asked).toContain("Kettle refunds");
      expect((await sources()).map((x) => x.title)).toContain("Kettle refunds");
      asked = confirmed(true);
      await text.getByRole("button", { name: "Delete Kettle refunds" }).click();
      await asked;
      await expect.poll(async () => (await sources()).map((x) => x.title)).not.toContain("Kettle refunds");
      await text.waitFor({ state: "detached" });

      // On a phone: nothing sideways (nor on the list of chatbots with its two new links), axe finds nothing serious.
      await page.setViewportSize({ width: 375, height: 800 });
      await page.reload();
      await page.getByTestId("knowledge-source").first().waitFor();
      expect(await overflows(page)).toBe(false);
      expect(await axeViolations(page)).toEqual([]);
      await docShot(page, "console-knowledge-phone.png", true);
      await page.goto(`${s.url}/console/chatbots`);
      await page.getByRole("link", { name: "Agent of Test bot" }).waitFor();
      expect(await overflows(page)).toBe(false);
      await context.close();
    },
    scaled(60_000),
  );

  test(
    "the agent's settings are saved; a tool with a bad schema is refused with nothing saved; a secret shows once",
    async () => {
      const context = await newContext(browser, { width: 1280, height: 900 });
      const page = await context.newPage();
      page.on("dialog", (d) => void d.accept());
      await signIn(page, s.url, owner.email, owner.password);
      await page.goto(`${s.url}/console/chatbots/${owner.chatbotId}/agent`);
      await page.getByRole("heading", { name: "Agent of Test bot", level: 1 }).waitFor();

      await page.getByLabel("Agent name").fill("Ava");
      await page.getByLabel("Instructions").fill("Be brief. Never promise a delivery date.");
      await page.getByLabel("Handover phrases").fill("lawyer\nchargeback");
      await page.getByLabel(/answers in a row/).fill("3");
      await page.getByLabel("Daily token budget").fill("50000");
      await page.getByRole("button", { name: "Save the agent's settings" }).click();
      await page.getByText("Saved.").waitFor();
      const settings = (await getJson(s.url, `/v1/account/chatbots/${owner.chatbotId}/agent_settings`, {}, auth)).body
        .data;
      expect(settings).toMatchObject({
        instructions: "Be brief. Never promise a delivery date.",
        handover_phrases: ["lawyer", "chargeback"],
        dont_know_limit: 3,
        daily_token_budget: 50000,
      });
      const bot = (await getJson(s.url, `/v1/account/chatbots/${owner.chatbotId}`, {}, auth)).body.data;
      expect(bot.appearance.agent_name).toBe("Ava");

      // A schema that is not an object schema, then one that is not JSON: told beside the field, nothing sent.
      await page.getByLabel("Name", { exact: true }).fill("track_order");
      await page.getByLabel("What it does and when to use it").fill("The shipping status of an order.");
      await page.getByLabel("URL").fill("http://127.0.0.1:9/track");
      const params = page.getByLabel("Parameters (JSON Schema)");
      await params.fill('{"type":"object","properties":{"order_id":{"type":"text"}}}');
      await page.getByRole("button", { name: "Add the tool" }).click();
      const error = page.getByTestId("tool-schema-error");
      expect(await error.textContent()).toContain('"text"');
      expect(await params.getAttribute("aria-invalid")).toBe("true");
      await params.fill("{type: object}");
      await page.getByRole("button", { name: "Add the tool" }).click();
      await error.filter({ hasText: "not JSON" }).waitFor();
      // One the console lets through but Ajv refuses: the service's 400 is shown, and still nothing is saved.
      await params.fill('{"type":"object","properties":{"order_id":{"type":"string","minLength":"two"}}}');
      await page.getByRole("button", { name: "Add the tool" }).click();
      await page.getByRole("alert").filter({ hasText: "parameters" }).waitFor();
      expect(await tools()).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);

      // A good schema: the tool is made and its secret shown once.
      await params.fill('{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}');
      await page.getByRole("button", { name: "Add the tool" }).click();
      const secret = (await page.getByTestId("tool-secret-value").textContent())!;
      expect(secret).toMatch(/^whsec_/);
      await page.getByTestId("tool").filter({ hasText: "track_order" }).waitFor();
      expect(await error.count()).toBe(0);
      expect(JSON.stringify(await tools())).not.toContain(secret);
      expect(await axeViolations(page)).toEqual([]);
      expect(await overflows(page)).toBe(false);
      await page.evaluate(() => scrollTo(0, 0));
      await docShot(page, "console-agent.png", true);
      await page.getByRole("button", { name: "Done" }).click();
      expect(await page.content()).not.toContain(secret);
      await page.reload();
      await page.getByTestId("tool").first().waitFor();
      expect(await page.content()).not.toContain(secret);

      // Rotation shows a new one, once; an edit keeps it; delete asks first.
      await page.getByRole("button", { name: "Rotate the secret of track_order" }).click();
      const rotated = (await page.getByTestId("tool-secret-value").textContent())!;
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await page.getByRole("button", { name: "Done" }).click();
      await page.getByRole("button", { name: "Edit track_order" }).click();
      await page.getByRole("heading", { name: "Edit the tool track_order" }).waitFor();
      await page.getByLabel("What it does and when to use it").fill("Where an order is, by its number.");
      await page.getByRole("button", { name: "Save the tool" }).click();
      await page.getByTestId("tool").filter({ hasText: "Where an order is" }).waitFor();
      expect(await page.getByTestId("tool-secret").count()).toBe(0);
      expect((await tools())[0]).toMatchObject({ description: "Where an order is, by its number." });

      await page.setViewportSize({ width: 375, height: 800 });
      await page.reload();
      await page.getByTestId("tool").first().waitFor();
      expect(await overflows(page)).toBe(false);
      expect(await axeViolations(page)).toEqual([]);
      await docShot(page, "console-agent-phone.png", true);

      await page.getByRole("button", { name: "Delete track_order" }).click();
      await page.getByText("No tools yet").waitFor();
      expect(await tools()).toEqual([]);
      await context.close();
    },
    scaled(60_000),
  );

  test("another account's chatbot is not found; an operator reads the knowledge and is kept off the agent", async () => {
    const other = await s.account();
    const context = await newContext(browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await signIn(page, s.url, owner.email, owner.password);
    for (const sub of ["knowledge", "agent"]) {
      await page.goto(`${s.url}/console/chatbots/${other.chatbotId}/${sub}`);
      await page.getByRole("heading", { name: "Chatbot not found", level: 1 }).waitFor();
      expect(await page.content()).not.toContain("Test bot");
    }
    await context.close();

    const made = await postJson(
      s.url,
      `/v1/account/chatbots/${owner.chatbotId}/knowledge_sources`,
      {
        kind: "snippets",
        title: "Opening times",
        snippets: [{ title: "Hours", url: "https://shop.example/hours", snippet: "Open 9 to 5." }],
      },
      auth,
    );
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const op = await addMember(s.url, auth.authorization.slice(7), `op-${Date.now()}@example.com`, "operator");
    const opContext = await newContext(browser, { width: 375, height: 740 });
    const opPage = await opContext.newPage();
    await signIn(opPage, s.url, op.email, op.password);
    await opPage.goto(`${s.url}/console/chatbots/${owner.chatbotId}/knowledge`);
    await opPage.getByRole("heading", { name: "Knowledge", level: 1 }).waitFor();
    await opPage.getByTestId("knowledge-source").first().waitFor();
    await opPage.getByText("Only the account's admins add").waitFor();
    expect(await opPage.getByRole("heading", { name: "Add a source" }).count()).toBe(0);
    expect(await opPage.getByRole("button", { name: /Resync|Delete/ }).count()).toBe(0);
    // An operator tries a question too (SearchKnowledge admits the team); one the knowledge does not answer.
    await opPage.getByLabel("Question", { exact: true }).fill("Do you repair skateboards?");
    await opPage.getByRole("button", { name: "Ask", exact: true }).click();
    await opPage.locator("[data-testid=try-verdict][data-answers=false]").waitFor();
    expect(await opPage.getByTestId("try-verdict").textContent()).toContain("does not know");
    expect(await axeViolations(opPage)).toEqual([]);
    await opPage.goto(`${s.url}/console/chatbots/${other.chatbotId}/knowledge`);
    await opPage.getByRole("heading", { name: "Chatbot not found", level: 1 }).waitFor();
    await opPage.goto(`${s.url}/console/chatbots/${owner.chatbotId}/agent`);
    await opPage.getByRole("heading", { name: "For admins only", level: 1 }).waitFor();
    await opContext.close();
  });
});
