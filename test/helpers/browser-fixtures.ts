import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { consoleRoutes } from "../../src/console/routes.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { startConsoleServer } from "../console/sign-in.js";
import { launchBrowser } from "../frame/browser.js";
import { type Embedding, startEmbedding } from "../frame/fixtures.js";
import type { TestAccount, TestServer } from "./server.js";

// Chromium (playwright-core) and the service, started once for the file (or the describe block the function is called
// in) by the `beforeAll` these register, and closed by their `afterAll`. With `canRun` false (the suite's system
// packages are missing, see suiteCanRun), nothing starts. A later `beforeAll` of the caller runs after these.

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
    overrides: { extraRoutes: (app) => [...frameRoutes(app), ...consoleRoutes(app)] },
    ...(env ? { env: env() } : {}),
  }));
}
