import { createServer, type Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { startConsoleServer } from "../console/sign-in.js";
import { freePort, launchBrowser } from "../frame/browser.js";
import { type Embedding, KNOWLEDGE, startEmbedding } from "../frame/fixtures.js";
import { consoleAndFrameRoutes } from "./console-routes.js";
import { issueTokens } from "./flows.js";
import { startServer, type TestAccount, type TestServer } from "./server.js";

// A browser on the run's Chromium (launchBrowser connects to it) and the service, started once for the file (or the
// describe block the function is called in) by the `beforeAll` these register, and closed by their `afterAll`. With `canRun` false (the suite's system
// packages are missing, see suiteCanRun), nothing starts. A later `beforeAll` of the caller runs after these.

/** Chromium alone, for a file whose tests start their own services. */
export function browserForFile(canRun = true): { browser: Browser } {
  const f = {} as { browser: Browser };
  beforeAll(async () => {
    if (canRun) f.browser = await launchBrowser();
  });
  afterAll(() => f.browser?.close());
  return f;
}

/** Chromium and the service with the console's routes, with one account (`owner`). */
export interface ConsoleFixture {
  browser: Browser;
  s: TestServer;
  owner: TestAccount;
}

export function consoleForFile(canRun = true): ConsoleFixture {
  const f = {} as ConsoleFixture;
  beforeAll(async () => {
    if (!canRun) return;
    [f.browser, f.s] = await Promise.all([launchBrowser(), startConsoleServer()]);
    f.owner = await f.s.account();
  });
  afterAll(async () => {
    await f.browser?.close();
    await f.s?.close(true);
  });
  return f;
}

/** Chromium and the example host page embedding the service (startEmbedding's options). */
export interface EmbeddingFixture {
  browser: Browser;
  e: Embedding;
}

export function embeddingForFile(
  canRun = true,
  opts: Parameters<typeof startEmbedding>[0] | (() => Parameters<typeof startEmbedding>[0]) = {},
): EmbeddingFixture {
  const f = {} as EmbeddingFixture;
  beforeAll(async () => {
    if (!canRun) return;
    [f.browser, f.e] = await Promise.all([launchBrowser(), startEmbedding(typeof opts === "function" ? opts() : opts)]);
  });
  afterAll(async () => {
    await f.browser?.close();
    await f.e?.close();
  });
  return f;
}

/** The same with the console's routes beside the frame's, for a test that drives the console and the frame together. */
export function consoleAndFrameForFile(canRun = true, env?: () => Record<string, string>): EmbeddingFixture {
  return embeddingForFile(canRun, () => ({
    overrides: { extraRoutes: consoleAndFrameRoutes },
    ...(env ? { env: env() } : {}),
  }));
}

/** Chromium, the service, one account whose chatbot answers from the frame's KNOWLEDGE, and a host page of the test's own. */
export interface HostPageFixture {
  browser: Browser;
  service: TestServer;
  account: TestAccount;
  /** The host page's origin, http://127.0.0.1:<port>, the one origin the account's chatbot allows. */
  hostUrl: string;
}

/** A visit to the host page: its query, and the chat frame's address for a new visitor, with tokens issued for them. */
export interface HostPageVisit {
  query: URLSearchParams;
  frameUrl: string;
  /** The service under the name localhost, so the frame's origin differs from the host page's. */
  appUrl: string;
}

/**
 * The fixture above, with a host page at `/` whose HTML `page` writes for each visit (each one a new visitor
 * `<visitor>-<n>`); any other path is a 404.
 */
export function hostPageForFile(
  canRun: boolean,
  visitor: string,
  page: (visit: HostPageVisit) => string,
): HostPageFixture {
  const f = {} as HostPageFixture;
  let host: Server | undefined;
  beforeAll(async () => {
    if (!canRun) return;
    const port = await freePort();
    f.hostUrl = `http://127.0.0.1:${port}`;
    [f.browser, f.service] = await Promise.all([launchBrowser(), startServer()]);
    f.account = await f.service.account({ origins: [f.hostUrl], knowledge: KNOWLEDGE });
    const appUrl = f.service.url.replace("127.0.0.1", "localhost");
    let n = 0;
    host = createServer((req, res) => {
      const url = new URL(req.url ?? "/", f.hostUrl);
      if (url.pathname !== "/") return void res.writeHead(404).end();
      const user = `${visitor}-${++n}`;
      void issueTokens(f.service.url, f.account, user).then((t) => {
        const query = new URLSearchParams({ user_id: user, access_token: t.access_token });
        const frameUrl = `${appUrl}/chatbot-iframe/${f.account.chatbotId}?${query}`;
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(page({ query: url.searchParams, frameUrl, appUrl }));
      });
    });
    await new Promise<void>((r) => host!.listen(port, "127.0.0.1", r));
  });
  afterAll(async () => {
    await f.browser?.close();
    await f.service?.close(true);
    host?.close();
  });
  return f;
}
