import { type Browser, type BrowserContext, chromium, type Download, type Frame, type Page } from "playwright-core";
import { atFileEnd } from "../helpers/leftovers.js";
import { chromiumPath } from "../helpers/system-packages.js";
import { scaled } from "../helpers/time-scale.js";

/** How Debian's Chromium is started: headless, never a downloaded browser. */
export const CHROMIUM_LAUNCH = {
  executablePath: chromiumPath(),
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
  ],
};

/** Where test/setup/chromium-run.ts answers the address of the run's one Chromium (set for the workers). */
export const BROWSER_SERVER_ENV = "AIAGENT_TEST_BROWSER_SERVER";

/** The browsers this file connected to or launched and has not closed yet, closed when the file ends. */
const open = new Set<Browser>();
atFileEnd(async () => {
  const left = [...open];
  open.clear();
  await Promise.all(left.map((b) => b.close().catch(() => undefined)));
});

/**
 * Debian's Chromium, headless. Under Vitest, a connection to the run's one Chromium (test/setup/chromium-run.ts starts
 * it when a file first asks): starting a Chromium for each file cost more CPU than most files' tests. Each connection
 * is a browser of its own to the file: its contexts are its own, and closing it closes them (and not the Chromium).
 * Without the run's Chromium (outside Vitest), a Chromium of its own. Whatever the file leaves open is closed when the
 * file ends.
 */
export async function launchBrowser(): Promise<Browser> {
  const server = process.env[BROWSER_SERVER_ENV];
  let browser: Browser;
  if (server) {
    const answer = await fetch(server);
    const text = await answer.text();
    if (!answer.ok) throw new Error(`the run's Chromium did not start: ${text}`);
    browser = await chromium.connect(text, { timeout: scaled(30_000) });
  } else browser = await chromium.launch(CHROMIUM_LAUNCH);
  open.add(browser);
  browser.on("disconnected", () => open.delete(browser));
  return browser;
}

/** A download's content as text, read through Playwright (a connected browser's downloads have no local path). */
export async function downloaded(download: Download): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A fresh browser context (own cookies and storage) whose waits fail after 10 s (scaled, like the test's own limit,
 * which it stays well inside: a click on a busy machine waits for a console that re-renders under it).
 */
export async function newContext(browser: Browser, viewport = { width: 1100, height: 680 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(scaled(10_000));
  return context;
}

/** A free loopback port (the host page must know its origin before the chatbot that allows it is made). */
export { freePort, onFreePort } from "../helpers/ports.js";

/** A window message as some frame received it. */
export interface RecordedMessage {
  /** The URL of the frame that received it. */
  receiver: string;
  origin: string;
  data: string;
}

/** Records every window message delivered to every frame of the page, main page and chat frame alike. */
export async function recordWindowMessages(page: Page): Promise<RecordedMessage[]> {
  const seen: RecordedMessage[] = [];
  await page.exposeBinding("__recordWindowMessage", ({ frame }: { frame: Frame }, origin: string, data: string) => {
    seen.push({ receiver: frame.url(), origin, data });
  });
  await page.addInitScript(() => {
    window.addEventListener(
      "message",
      (e) => {
        let data: string;
        try {
          data = JSON.stringify(e.data);
        } catch {
          data = String(e.data);
        }
        (window as unknown as { __recordWindowMessage(o: string, d: string): void }).__recordWindowMessage(
          e.origin,
          data,
        );
      },
      true,
    );
  });
  return seen;
}

/** The chat frame inside a host page (a cross-origin child frame at /chatbot-iframe/…). */
export async function chatFrame(page: Page): Promise<Frame> {
  const deadline = Date.now() + scaled(10_000);
  for (;;) {
    const f = page.frames().find((x) => x !== page.mainFrame() && x.url().includes("/chatbot-iframe/"));
    if (f) {
      try {
        await f.waitForSelector("html[data-state=ready]", { timeout: scaled(10_000) });
      } catch (e) {
        throw new Error(
          `the chat frame did not get ready: ${
            (await f
              .locator("#notice")
              .textContent()
              .catch(() => "")) ?? ""
          } (${(e as Error).message})`,
        );
      }
      return f;
    }
    if (Date.now() > deadline)
      throw new Error(
        `the chat frame did not load; frames: ${page
          .frames()
          .map((x) => x.url())
          .join(", ")}`,
      );
    await page.waitForTimeout(50);
  }
}

/** Types a message in the frame as a person would, and presses Enter. */
export async function typeMessage(frame: Frame, text: string): Promise<void> {
  // The message box (a closed conversation also shows the rating's comment box).
  const input = frame.locator("#input");
  await input.click();
  await input.pressSequentially(text, { delay: 0 });
  // As a person would: Enter once the frame can send (not while the previous answer is still coming in).
  await frame.locator("#send:enabled").waitFor();
  await input.press("Enter");
}

/** Everything a page keeps where a secret could leak: storage of each frame, cookies, frame URLs and DOMs. */
export async function collectExposedState(page: Page, context: BrowserContext): Promise<string> {
  const parts: string[] = [JSON.stringify(await context.cookies())];
  for (const f of page.frames()) {
    parts.push(f.url());
    parts.push(await f.content());
    parts.push(
      await f.evaluate(() => {
        // A frame whose storage the browser blocks (third-party storage) cannot have written any either.
        const read = (get: () => unknown) => {
          try {
            return JSON.stringify(get());
          } catch (e) {
            return `(not readable: ${(e as Error).name})`;
          }
        };
        return [
          read(() => ({ ...localStorage })),
          read(() => ({ ...sessionStorage })),
          read(() => document.cookie),
          location.href,
          document.title,
        ].join("\n");
      }),
    );
  }
  return parts.join("\n");
}

/** A customer opens the client's example page (`hostUrl`) in a fresh browser context; answers the chat frame in it. */
export async function openCustomerFrame(
  browser: Browser,
  hostUrl: string,
): Promise<{ context: BrowserContext; page: Page; frame: Frame }> {
  const context = await newContext(browser);
  const page = await context.newPage();
  await page.goto(`${hostUrl}/`);
  return { context, page, frame: await chatFrame(page) };
}
