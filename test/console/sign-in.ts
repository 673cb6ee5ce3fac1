import type { Browser, Page } from "playwright-core";
import { consoleRoutes } from "../../src/console/routes.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { launchBrowser } from "../frame/browser.js";
import { type Embedding, startEmbedding } from "../frame/fixtures.js";
import { startServer, type TestServer } from "../helpers/server.js";

/** The service with the frame's and the console's routes, as `aiagent serve` has them. */
export function startConsoleServer(): Promise<TestServer> {
  return startServer({ overrides: { extraRoutes: (app) => [...frameRoutes(app), ...consoleRoutes(app)] } });
}

/** Signs in through the console's form and waits for the inbox. */
export async function signIn(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Inbox" }).waitFor();
}

/**
 * Chromium and the example host page embedding a service with the console's routes, for a test that drives the
 * console and the customer's frame together; `stop` closes both.
 */
export async function startConsoleAndFrame(): Promise<{ browser: Browser; e: Embedding; stop(): Promise<void> }> {
  const [browser, e] = await Promise.all([
    launchBrowser(),
    startEmbedding({ overrides: { extraRoutes: (app) => [...frameRoutes(app), ...consoleRoutes(app)] } }),
  ]);
  return {
    browser,
    e,
    async stop() {
      await browser.close();
      await e.close();
    },
  };
}
