import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { ROOT, section } from "../helpers/docs.js";
import { getJson, postJson } from "../helpers/http.js";
import { killAtExit, removeAtExit } from "../helpers/leftovers.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { suiteCanRun, webPython } from "../helpers/system-packages.js";
import { scaled, waitFor } from "../helpers/time-scale.js";
import {
  chatFrame,
  collectExposedState,
  freePort,
  launchBrowser,
  newContext,
  type RecordedMessage,
  recordWindowMessages,
  typeMessage,
} from "./browser.js";
import { KNOWLEDGE } from "./fixtures.js";

// The ten-line embedding of docs/embedding.md (examples/embed-frameworks), run as a client runs it: from a folder
// outside the checkout that installs the client package from its tarball (npm pack) and the Python package from a
// wheel built from the checkout, against a live service, in Chromium. For each framework: the frame loads, a message
// is sent and answered, and the frame's token is refreshed through the one route. Time is moved, not waited for: the
// browser's clock is paused, the service's test clock frozen, and both are run forward together.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const pyCanRun =
  canRun &&
  suiteCanRun(
    import.meta.filename,
    ["python3-fastapi", "python3-flask", "python3-uvicorn", "python3-pip"],
    "FastAPI and Flask",
  );
const TTL_MS = 20_000;
const EXAMPLES = join(ROOT, "examples/embed-frameworks");
/** The service's address in the page as the guide shows it, replaced by the test service's. */
const DOC_SERVICE = "http://127.0.0.1:8080";
const run = promisify(execFile);

interface Framework {
  name: string;
  file: string;
  python?: boolean;
  /** The command that runs it in the folder, on `port`. */
  command(port: number, python: string): [string, string[]];
}
const FRAMEWORKS: Framework[] = [
  { name: "Express", file: "express.mjs", command: () => [process.execPath, ["express.mjs"]] },
  { name: "Fastify", file: "fastify.mjs", command: () => [process.execPath, ["fastify.mjs"]] },
  { name: "Hono", file: "hono.mjs", command: () => [process.execPath, ["hono.mjs"]] },
  {
    name: "FastAPI",
    file: "fastapi_app.py",
    python: true,
    command: (port, py) => [py, ["-m", "uvicorn", "fastapi_app:app", "--host", "127.0.0.1", "--port", String(port)]],
  },
  {
    name: "Flask",
    file: "flask_app.py",
    python: true,
    command: (port, py) => [py, ["-m", "flask", "--app", "flask_app", "run", "--port", String(port)]],
  },
];

let browser: Browser;
let service: TestServer;
/** The frame's origin: the service under the name localhost, so it differs from the host pages' 127.0.0.1. */
let appUrl: string;
/** The folder outside the checkout: node/ with the tarball installed, py/ with the wheel installed in site/. */
let outside: string;
let python = "python3";

/** The client package as a user gets it: `npm run pack:client`, then `npm install <tarball>` in their own project. */
async function installNodePackage(dir: string): Promise<void> {
  const packed = await run("npm", ["run", "--silent", "pack:client"], { cwd: ROOT, timeout: scaled(120_000) });
  const tarball = join(ROOT, "tmp", packed.stdout.trim().split("\n").at(-1)!);
  mkdirSync(dir);
  copyFileSync(tarball, join(dir, "aiagent-0.1.0.tgz"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }));
  const dev = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies as Record<string, string>;
  const frameworks = ["express", "fastify", "hono", "@hono/node-server"].map((p) => `${p}@${dev[p]}`);
  await run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "./aiagent-0.1.0.tgz",
      ...frameworks,
    ],
    { cwd: dir, timeout: scaled(180_000) },
  );
}

/** The Python package as a user gets it: a wheel built from the checkout's python/, installed with pip. */
async function installPythonPackage(dir: string): Promise<void> {
  mkdirSync(dir);
  // Built from a copy: setuptools writes build/ and *.egg-info beside the sources.
  cpSync(join(ROOT, "python"), join(dir, "src"), {
    recursive: true,
    filter: (f) => !/__pycache__|egg-info|build$/.test(f),
  });
  const pip = (args: string[]) => run(python, ["-m", "pip", ...args], { cwd: dir, timeout: scaled(120_000) });
  await pip(["wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", "wheels", "./src"]);
  const [wheel] = readdirSync(join(dir, "wheels"));
  expect(wheel).toBe("aiagent_embed-0.1.0-py3-none-any.whl");
  await pip(["install", "--no-deps", "--no-index", "--target", "site", `wheels/${wheel}`]);
}

beforeAll(async () => {
  if (!canRun) return; // every suite below is skipped, with the line naming the package
  outside = mkdtempSync(join(tmpdir(), "aiagent-ten-lines-"));
  removeAtExit(outside);
  python = (pyCanRun && webPython()) || python;
  [browser, service] = await Promise.all([
    launchBrowser(),
    startServer({ env: { AIAGENT_ACCESS_TOKEN_TTL: String(TTL_MS / 1000) } }),
    installNodePackage(join(outside, "node")),
    pyCanRun ? installPythonPackage(join(outside, "py")) : undefined,
  ]);
  appUrl = service.url.replace("127.0.0.1", "localhost");
  for (const f of FRAMEWORKS) {
    const dir = join(outside, f.python ? "py" : "node");
    copyFileSync(join(EXAMPLES, f.file), join(dir, f.file));
    writeFileSync(
      join(dir, "page.html"),
      readFileSync(join(EXAMPLES, "page.html"), "utf8").replace(DOC_SERVICE, appUrl),
    );
  }
}, scaled(300_000));
afterAll(async () => {
  await browser?.close();
  await service?.close(true);
  if (outside) rmSync(outside, { recursive: true, force: true });
});

/** Starts the example in its folder and waits until it serves its page; stops it when the test ends. */
async function startHost(f: Framework, env: Record<string, string>, port: number): Promise<ChildProcess> {
  const [command, args] = f.command(port, python);
  const child = spawn(command, args, {
    cwd: join(outside, f.python ? "py" : "node"),
    env: { ...process.env, ...env, PORT: String(port), PYTHONPATH: "site" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const forget = killAtExit(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        forget();
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  );
  await waitFor(
    `${f.file} serves its page on port ${port}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${f.file} exited with ${child.exitCode}: ${stderr}`);
      return (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.status === 200;
    },
    { ms: 30_000, stepMs: 100 },
  );
  return child;
}

async function elapse(page: Page, ms: number): Promise<void> {
  service.clock.advance(ms);
  await page.clock.runFor(ms);
}

const parsed = (messages: RecordedMessage[], type: string) =>
  messages.filter((m) => m.data.includes(`"${type}"`)).map((m) => JSON.parse(m.data) as Record<string, unknown>);

for (const f of FRAMEWORKS) {
  describe.runIf(canRun && (!f.python || pyCanRun))(`${f.name}: examples/embed-frameworks/${f.file}`, () => {
    test(
      "installed outside the checkout, the page's one call mounts the frame, chats, and refreshes through the route",
      async () => {
        service.clock.freezeAt(Date.now());
        onTestFinished(() => service.clock.resume());
        const port = await freePort();
        const hostUrl = `http://127.0.0.1:${port}`;
        const account = await service.account({ origins: [hostUrl], knowledge: KNOWLEDGE });
        await startHost(
          f,
          {
            AIAGENT_URL: service.url,
            AIAGENT_APP_URL: appUrl,
            AIAGENT_CHATBOT_ID: account.chatbotId,
            AIAGENT_CLIENT_API_KEY: account.apiKey,
          },
          port,
        );
        // Nobody signed in: the route refuses, and a request without the host script's header too.
        const post = (path: string, headers: Record<string, string>) =>
          fetch(`${hostUrl}${path}`, { method: "POST", headers });
        expect((await post("/aiagent/session", { "x-requested-with": "aiagent-host" })).status).toBe(401);
        expect((await post("/aiagent/session", { cookie: "uid=someone" })).status).toBe(403);
        expect(
          (await post("/aiagent/refresh", { "x-requested-with": "aiagent-host", cookie: "uid=nobody" })).status,
        ).toBe(401);

        const userId = `${f.name.toLowerCase()}-customer-${port}`;
        const context = await newContext(browser);
        onTestFinished(() => context.close());
        // The client's own login: the examples read the signed-in user from this cookie.
        await context.addCookies([{ name: "uid", value: userId, url: hostUrl, httpOnly: true }]);
        const page = await context.newPage();
        await page.clock.install();
        await page.clock.pauseAt(Date.now() + 1000);
        const messages = await recordWindowMessages(page);
        const failed: string[] = [];
        const refreshes: number[] = [];
        page.on("response", (r) => {
          if (r.status() >= 400) failed.push(`${r.status()} ${r.url().split("?")[0]}`);
          if (r.url() === `${hostUrl}/aiagent/refresh`) refreshes.push(r.status());
        });
        await page.goto(`${hostUrl}/`);
        const frame = await chatFrame(page);
        expect(new URL(frame.url()).pathname).toBe(`/chatbot-iframe/${account.chatbotId}`);
        await typeMessage(frame, "How long does shipping take?");
        await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).last().waitFor();

        // Ahead of expiry the frame asks; the host script asks the route, which refreshes with the kept token.
        await elapse(page, TTL_MS * 0.85 + 100);
        await expect.poll(() => parsed(messages, "[TOKEN_REFRESH_RESPONSE]").length).toBe(1);
        expect(refreshes).toEqual([200]);
        const [ask] = parsed(messages, "[TOKEN_REFRESH]");
        expect(parsed(messages, "[TOKEN_REFRESH_RESPONSE]")[0]).toEqual({
          type: "[TOKEN_REFRESH_RESPONSE]",
          access_token: expect.any(String),
          request_id: ask!.request_id,
        });
        // The first token has expired by now: the next message goes out with the refreshed one.
        await elapse(page, TTL_MS * 0.2);
        await typeMessage(frame, "Can I return an item?");
        await frame.locator(".msg--assistant", { hasText: "return any item within 30 days" }).last().waitFor();
        expect(failed).toEqual([]);

        // Only access tokens crossed into the browser: the API key and the refresh token stayed on the server.
        const exposed = [JSON.stringify(messages), await collectExposedState(page, context)].join("\n");
        expect(exposed).not.toContain(account.apiKey);
        expect(exposed).not.toMatch(/\brt_[A-Za-z0-9_-]{10,}/);
        // The profile the server gave is the inbox's contact, not a bare user id.
        const idt = await postJson(service.url, "/get_id_token", {
          user_email_id: account.email,
          client_api_key: account.apiKey,
        });
        const listed = await getJson(
          service.url,
          "/get_contact_conversations",
          { user_email_id: account.email, search: userId },
          { authorization: `Bearer ${idt.body.data.idToken}` },
        );
        expect(listed.body.data.data.contacts[0]).toMatchObject({ contact_name: "Ada", email: "ada@example.com" });
      },
      scaled(90_000),
    );
  });
}

describe.runIf(canRun)("the ten-line examples in the embedding guide (docs/embedding.md)", () => {
  const blocks = () => [...section("docs/embedding.md", "Embed the agent").matchAll(/```(\w+)\n([\s\S]*?)```/g)];
  test.each([...FRAMEWORKS.map((f) => [f.file, 10] as const), ["page.html", 5] as const])(
    "%s is in the guide verbatim, in at most %i lines",
    (file, max) => {
      const text = readFileSync(join(EXAMPLES, file), "utf8");
      expect(blocks().map((m) => m[2])).toContain(text);
      expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(max);
    },
  );
});
