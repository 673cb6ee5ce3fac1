import type { Browser, Page } from "playwright-core";
import { consoleRoutes } from "../../src/console/routes.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { chatFrame, newContext, typeMessage } from "../frame/browser.js";
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

/** A customer on the client's example page (`hostUrl`) writes in the chat frame and waits for the agent's answer. */
export async function customerWrites(browser: Browser, hostUrl: string, text: string) {
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(`${hostUrl}/`);
  const frame = await chatFrame(page);
  await typeMessage(frame, text);
  await frame.locator(".msg--assistant").first().waitFor();
  return { context, page, frame };
}
