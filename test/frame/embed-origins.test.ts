import { execFileSync } from "node:child_process";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createEmbedSession } from "../../src/client/index.js";
import { signIn, startConsoleServer } from "../console/sign-in.js";
import { send } from "../helpers/flows.js";
import type { TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, launchBrowser, newContext, onFreePort, typeMessage } from "./browser.js";
import { type ExampleProcess, startExample } from "./example-process.js";
import { KNOWLEDGE } from "./fixtures.js";

// Issue 31, items 2 and 3: the embed example with a chatbot that allows several origins, the real cause of a refused
// session, and the customer's name given by createEmbedSession reaching the inbox.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const python = (() => {
  try {
    execFileSync("python3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

let browser: Browser;
let service: TestServer;

beforeAll(async () => {
  if (!canRun) return;
  [browser, service] = await Promise.all([launchBrowser(), startConsoleServer()]);
});
afterAll(async () => {
  await browser?.close();
  await service?.close(true);
});

async function startHost(kind: "ts" | "py", env: Record<string, string>): Promise<ExampleProcess> {
  return kind === "ts"
    ? startExample(process.execPath, ["--conditions=source", "--import", "tsx", "examples/embed/server.ts"], env)
    : startExample("python3", ["examples/embed/server.py"], env);
}

for (const kind of ["ts", "py"] as const) {
  describe.skipIf(!canRun || (kind === "py" && !python))(`examples/embed/server.${kind}`, () => {
    test("embeds the chat for a chatbot that allows two origins: the page's origin goes with the session request", async () => {
      const host = await onFreePort(async (port) => {
        const hostOrigin = `http://127.0.0.1:${port}`;
        const account = await service.account({ origins: ["https://shop.example", hostOrigin], knowledge: KNOWLEDGE });
        return startHost(kind, {
          AIAGENT_URL: service.url,
          AIAGENT_APP_URL: service.url.replace("127.0.0.1", "localhost"),
          AIAGENT_CHATBOT_ID: account.chatbotId,
          AIAGENT_CLIENT_API_KEY: account.apiKey,
          PORT: String(port),
        });
      });
      const context = await newContext(browser);
      try {
        const page = await context.newPage();
        const refused: string[] = [];
        page.on("response", (r) => {
          if (r.status() >= 400) refused.push(`${r.status()} ${r.url()}`);
        });
        await page.goto(host.url);
        const frame = await chatFrame(page);
        await typeMessage(frame, "How long does shipping take?");
        await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).waitFor();
        expect(refused).toEqual([]);
      } finally {
        await context.close();
        await host.stop();
      }
    });

    test("a refused session is logged and answered with its cause, not a bare 502", async () => {
      const { port, account, host } = await onFreePort(async (port) => {
        const account = await service.account({ origins: [`http://127.0.0.1:${port}`] });
        const host = await startHost(kind, {
          AIAGENT_URL: service.url,
          AIAGENT_CHATBOT_ID: account.chatbotId,
          AIAGENT_CLIENT_API_KEY: `${account.apiKey}-not-it`,
          PORT: String(port),
        });
        return { port, account, host };
      });
      try {
        const r = await fetch(`${host.url}aiagent/session`, {
          method: "POST",
          headers: {
            "x-requested-with": "aiagent-host",
            cookie: "uid=00000000-0000-4000-8000-000000000042",
            origin: `http://127.0.0.1:${port}`,
          },
        });
        expect(r.status).toBe(502);
        const body = (await r.json()) as { error: string };
        expect(body.error).toMatch(/^the chat service refused: .*client_api_key/);
        await expect.poll(() => host.stderr()).toMatch(/aiagent: .*client_api_key/);
        expect(host.stderr()).not.toContain(account.apiKey);
      } finally {
        await host.stop();
      }
    });
  });
}

describe.runIf(canRun)("createEmbedSession with the customer's profile", () => {
  test("the inbox lists the customer by the name and e-mail the client's server gave", async () => {
    const account = await service.account({ knowledge: KNOWLEDGE });
    const s = await createEmbedSession({
      baseUrl: service.url,
      clientApiKey: account.apiKey,
      chatbotId: account.chatbotId,
      userId: "customer-ada",
      contact: { name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0000" },
    });
    await send(service.url, s.accessToken, "Where is my parcel?");

    const context = await newContext(browser, { width: 1280, height: 800 });
    try {
      const page = await context.newPage();
      await signIn(page, service.url, account.email, account.password);
      const contact = page.locator(".contact", { hasText: "Ada Lovelace" });
      await contact.waitFor();
      await contact.click();
      await page.getByRole("heading", { name: "Ada Lovelace" }).waitFor();
      const about = await page.locator(".conversation__head").textContent();
      expect(about).toContain("ada@example.com");
      expect(about).toContain("+44 20 7946 0000");
    } finally {
      await context.close();
    }
  });
});

describe.runIf(canRun)("the console's embed page for a chatbot with several origins", () => {
  test("its snippets name the page's origin and its copy buttons say what they copy", async () => {
    const account = await service.account({ origins: ["https://shop.example", "https://eu.shop.example"] });
    const context = await newContext(browser, { width: 1280, height: 800 });
    try {
      const page = await context.newPage();
      await signIn(page, service.url, account.email, account.password);
      await page.goto(`${service.url}/console/chatbots/${account.chatbotId}/embed`);
      await page.getByRole("heading", { name: /^Embed / }).waitFor();
      expect(await page.getByText("passes the page's own origin").count()).toBe(1);
      const byHand = await page.locator("pre", { hasText: "get_access_token" }).textContent();
      expect(byHand).toContain(`host_origin=${encodeURIComponent("https://shop.example")}`);
      expect(byHand).toContain('"contact":{"contact_name"');
      const copies = await page.getByRole("button", { name: /^Copy/ }).allTextContents();
      expect(copies).toEqual(
        expect.arrayContaining(["Copy the server's settings", "Copy the page", "Copy the curl command"]),
      );
      expect(copies.filter((c) => /^Copy (or|your)\b/i.test(c))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
