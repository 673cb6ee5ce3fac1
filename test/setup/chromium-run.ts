import { createServer, type Server } from "node:http";
import { type BrowserServer, chromium } from "playwright-core";
import { BROWSER_SERVER_ENV, CHROMIUM_LAUNCH } from "../frame/browser.js";
import { atExit } from "../helpers/leftovers.js";
import { sharedByProjects } from "./shared-by-projects.js";

/** The run's one Chromium, shared by every project's global setup (each project runs this file). */
interface Shared {
  /** Answers the Chromium's address to the workers (GET), starting it on the first ask. */
  broker: Promise<Server>;
  chromium?: Promise<BrowserServer>;
}

/**
 * The run's one Chromium, which the browser files connect to (test/frame/browser.ts `launchBrowser`), each with
 * browsers and contexts of its own, instead of each starting a Chromium: about a second of CPU a start, and the files
 * that drive Chromium are a sixth of the suite. It is started when a file first asks for it (a run without a browser
 * file starts none): the workers ask at the address in AIAGENT_TEST_BROWSER_SERVER. It is stopped at the run's end, and
 * killed if the run's process exits another way (Ctrl-C, SIGTERM, a crash); a worker that dies only drops its
 * connection, and with it its contexts.
 */
export default async function setup() {
  const { value: shared, lastOut } = sharedByProjects("chromium", (): Shared => {
    const shared: Shared = { broker: listen(() => (shared.chromium ??= start())) };
    return shared;
  });
  const address = (await shared.broker).address();
  if (address && typeof address === "object") process.env[BROWSER_SERVER_ENV] = `http://127.0.0.1:${address.port}/`;
  return async () => {
    if (!lastOut()) return;
    (await shared.broker).close();
    await (await shared.chromium?.catch(() => undefined))?.close();
  };
}

/** A server that answers the address of the Chromium that `browser()` gives (starting it on the first ask). */
function listen(browser: () => Promise<BrowserServer>): Promise<Server> {
  const server = createServer((_req, res) => {
    browser().then(
      (s) => res.writeHead(200, { "content-type": "text/plain" }).end(s.wsEndpoint()),
      (e: Error) => res.writeHead(503, { "content-type": "text/plain" }).end(String(e.message).split("\n")[0]),
    );
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

async function start(): Promise<BrowserServer> {
  const server = await chromium.launchServer(CHROMIUM_LAUNCH);
  // Playwright kills it on SIGINT, SIGTERM and SIGHUP; this also covers an exit without them. Chromium is started in
  // a process group of its own, its renderers and helpers with it: the group is killed.
  const pid = server.process().pid;
  const forget = atExit(() => {
    try {
      if (pid) process.kill(-pid, "SIGKILL");
    } catch {
      server.process().kill("SIGKILL");
    }
  });
  server.on("close", forget);
  return server;
}
