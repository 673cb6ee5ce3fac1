import type { Browser, BrowserContext, Page } from "playwright-core";
import { newContext, openCustomerFrame, typeMessage } from "../frame/browser.js";
import type { Embedding } from "../frame/fixtures.js";
import { consoleAndFrameRoutes } from "../helpers/console-routes.js";
import { addMember, idToken } from "../helpers/flows.js";
import { startServer, type TestServer } from "../helpers/server.js";

/** The service with the frame's and the console's routes, as `aiagent serve` has them. */
export function startConsoleServer(): Promise<TestServer> {
  return startServer({ overrides: { extraRoutes: consoleAndFrameRoutes } });
}

/** Signs in through the console's form and waits for the inbox. */
export async function signIn(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Inbox" }).waitFor();
}

/** The admin of the embedding's account signs in on a 1280×900 window and opens the appearance page of its chatbot. */
export async function openAppearancePage(
  browser: Browser,
  e: Embedding,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newContext(browser, { width: 1280, height: 900 });
  const page = await context.newPage();
  await signIn(page, e.service.url, e.account.email, e.account.password);
  await page.getByRole("link", { name: "Chatbots" }).click();
  await page.getByRole("link", { name: "Appearance of Shop assistant" }).click();
  await page.getByRole("heading", { name: "Appearance of Shop assistant" }).waitFor();
  return { context, page };
}

/** A customer on the client's example page (`hostUrl`) writes in the chat frame and waits for the agent's answer. */
export async function customerWrites(browser: Browser, hostUrl: string, text: string) {
  const { context, page, frame } = await openCustomerFrame(browser, hostUrl);
  await typeMessage(frame, text);
  await frame.locator(".msg--assistant[data-message-id]").first().waitFor();
  return { context, page, frame };
}

/** A new console page in the context, with notifications allowed for `origin`, recording the desktop notifications it raises (headless Chromium shows none on screen). */
export async function notifiedPage(context: BrowserContext, origin: string): Promise<Page> {
  await context.grantPermissions(["notifications"], { origin });
  const page = await context.newPage();
  await page.addInitScript(() => {
    const seen: { title: string; body: string }[] = [];
    (window as unknown as { __notes: typeof seen }).__notes = seen;
    window.Notification = new Proxy(Notification, {
      construct(target, args: [string, NotificationOptions?]) {
        seen.push({ title: args[0], body: args[1]?.body ?? "" });
        return Reflect.construct(target, args);
      },
    });
  });
  return page;
}

/** A teammate joins the embedding's account (invited and accepted), then a customer writes in the frame (customerWrites). */
export async function teammateAndCustomer(fx: { browser: Browser; e: Embedding }, email: string, text: string) {
  const member = await addMember(fx.e.service.url, await idToken(fx.e.service.url, fx.e.account), email);
  return { member, ...(await customerWrites(fx.browser, fx.e.host.url, text)) };
}

/** The embedding's admin signs in on a 1280×800 window and opens the newest contact's conversation in the inbox. */
export async function adminOpensLatest(fx: { browser: Browser; e: Embedding }) {
  const context = await newContext(fx.browser, { width: 1280, height: 800 });
  const page = await context.newPage();
  await signIn(page, fx.e.service.url, fx.e.account.email, fx.e.account.password);
  await page.locator(".contact").first().click();
  return { context, page };
}
