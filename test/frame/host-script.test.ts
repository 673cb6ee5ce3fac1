import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { section } from "../helpers/docs.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import {
  chatFrame,
  collectExposedState,
  launchBrowser,
  newContext,
  onFreePort,
  type RecordedMessage,
  recordWindowMessages,
  typeMessage,
} from "./browser.js";
import { type ExampleProcess, startExample } from "./example-process.js";
import { KNOWLEDGE } from "./fixtures.js";

// The README's integration (examples/embed: a server of ≤ 40 lines in TypeScript or Python, a page of ≤ 20 lines with
// the host script), run as the README runs it, against a live service, in real Chromium. Time is moved, not waited
// for: the browser's clock is paused, the service's test clock frozen, and both are run forward together.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);
const TTL_MS = 20_000;

function hasPython(): boolean {
  try {
    execFileSync("python3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const python = hasPython();

let browser: Browser;
let service: TestServer;
/** The frame's origin: the service under the name localhost, so it differs from the host pages' 127.0.0.1. */
let appUrl: string;

beforeAll(async () => {
  if (!canRun) return; // every suite below is skipped, with the line naming the package
  [browser, service] = await Promise.all([
    launchBrowser(),
    startServer({ env: { AIAGENT_ACCESS_TOKEN_TTL: String(TTL_MS / 1000) } }),
  ]);
  appUrl = service.url.replace("127.0.0.1", "localhost");
});
afterAll(async () => {
  await browser?.close();
  await service?.close(true);
});

/** A chatbot that allows one host page's origin, and that host page's server started from examples/embed. */
async function startHost(
  kind: "ts" | "py",
): Promise<{ host: ExampleProcess; account: TestAccount; hostOrigin: string }> {
  // The chatbot allows the page's origin, so its port is chosen first; taken before the page listened, both are
  // made again on another.
  return onFreePort(async (port) => {
    const hostOrigin = `http://127.0.0.1:${port}`;
    const account = await service.account({ origins: [hostOrigin], knowledge: KNOWLEDGE });
    const env = {
      AIAGENT_URL: service.url,
      AIAGENT_APP_URL: appUrl,
      AIAGENT_CHATBOT_ID: account.chatbotId,
      AIAGENT_CLIENT_API_KEY: account.apiKey,
      PORT: String(port),
    };
    const host =
      kind === "ts"
        ? await startExample(
            process.execPath,
            ["--conditions=source", "--import", "tsx", "examples/embed/server.ts"],
            env,
          )
        : await startExample("python3", ["examples/embed/server.py"], env);
    return { host, account, hostOrigin };
  });
}

async function elapse(page: Page, ms: number): Promise<void> {
  service.clock.advance(ms);
  await page.clock.runFor(ms);
}

const parsed = (messages: RecordedMessage[], type: string) =>
  messages.filter((m) => m.data.includes(`"${type}"`)).map((m) => JSON.parse(m.data) as Record<string, unknown>);

for (const kind of ["ts", "py"] as const) {
  describe.skipIf(!canRun || (kind === "py" && !python))(`examples/embed/server.${kind} with the host script`, () => {
    test("the page mounts the frame, chats, and the frame is refreshed ahead of expiry through the server, with no failed call", async () => {
      // Both clocks stand still but for elapse(): a slow machine's real seconds would otherwise age tokens at the service.
      service.clock.freezeAt(Date.now());
      onTestFinished(() => service.clock.resume());
      const { host, account } = await startHost(kind);
      const context = await newContext(browser);
      try {
        const page = await context.newPage();
        await page.clock.install();
        await page.clock.pauseAt(Date.now() + 1000);
        const messages = await recordWindowMessages(page);
        const failed: string[] = [];
        page.on("response", (r) => {
          if (r.status() >= 400) failed.push(`${r.status()} ${r.url().split("?")[0]}`);
        });
        await page.goto(host.url);
        const frame = await chatFrame(page);
        // The host script made the iframe from the address the server made, told it the page's origin, and took it
        // out of no one's hands: the access token is only in the iframe's initial address, which the frame removes.
        expect(new URL(frame.url()).pathname).toBe(`/chatbot-iframe/${account.chatbotId}`);
        await typeMessage(frame, "How long does shipping take?");
        await frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" }).last().waitFor();

        await elapse(page, TTL_MS * 0.85 + 100);
        await expect.poll(() => parsed(messages, "[TOKEN_REFRESH_RESPONSE]").length).toBe(1);
        const [ask] = parsed(messages, "[TOKEN_REFRESH]");
        const [answer] = parsed(messages, "[TOKEN_REFRESH_RESPONSE]");
        expect(ask).toMatchObject({ type: "[TOKEN_REFRESH]", reason: "TokenExpiringSoon" });
        // The host script answers the question it was asked: the request id comes back.
        expect(answer).toEqual({
          type: "[TOKEN_REFRESH_RESPONSE]",
          access_token: expect.any(String),
          request_id: ask!.request_id,
        });

        await elapse(page, TTL_MS * 0.2);
        await typeMessage(frame, "Can I return an item?");
        await frame.locator(".msg--assistant", { hasText: "return any item within 30 days" }).last().waitFor();
        expect(failed).toEqual([]);
        expect(parsed(messages, "[TOKEN_REFRESH]")).toHaveLength(1);
        // Only access tokens crossed into the browser: the API key and the refresh token stayed on the server.
        const exposed = [JSON.stringify(messages), await collectExposedState(page, context)].join("\n");
        expect(exposed).not.toContain(account.apiKey);
        expect(exposed).not.toMatch(/\brt_[A-Za-z0-9_-]{10,}/);
      } finally {
        await context.close();
        await host.stop();
      }
    });
  });
}

describe.runIf(canRun)("the manual's integration (docs/embedding.md)", () => {
  const embedding = section("docs/embedding.md", "Embed the agent");
  const blocks = [...embedding.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => m[2]!);

  test.each([
    ["examples/embed/server.ts", 40],
    ["examples/embed/server.py", 40],
    ["examples/embed/page.html", 20],
  ])("%s is in the embedding guide verbatim, in at most %i lines", (file, max) => {
    const text = readFileSync(file, "utf8");
    expect(blocks).toContain(text);
    expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(max);
    // The guide states the count it shows.
    expect(embedding).toContain(`${text.trimEnd().split("\n").length} lines`);
  });
});

describe.runIf(canRun)("GET /embed/v1.js", () => {
  test("serves the host script to any page, long-cacheable, and the same content under its hash for a year", async () => {
    const res = await fetch(`${service.url}/embed/v1.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=3600");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const body = await res.text();
    expect(body).toContain("[TOKEN_REFRESH_RESPONSE]");
    const pinned = res.headers.get("content-location")!;
    expect(pinned).toMatch(/^\/embed\/v1\.[0-9a-f]{16}\.js$/);

    const again = await fetch(`${service.url}${pinned}`);
    expect(again.status).toBe(200);
    expect(again.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await again.text()).toBe(body);

    const unchanged = await fetch(`${service.url}/embed/v1.js`, {
      headers: { "if-none-match": res.headers.get("etag")! },
    });
    expect(unchanged.status).toBe(304);
    const stale = await fetch(`${service.url}/embed/v1.0123456789abcdef.js`);
    expect(stale.status).toBe(404);
    expect(await stale.text()).toContain("/embed/v1.js");
  });

  test("AiAgent.mount refuses a launch code beside an address or without its chatbot, a missing refresh, and an address for another chatbot or user, naming the problem", async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${service.url}/healthz`);
      await page.addScriptTag({ url: `${service.url}/embed/v1.js` });
      const frameUrl = `${appUrl}/chatbot-iframe/00000000-0000-4000-8000-000000000001?user_id=u1&access_token=x.y.z`;
      const attempt = (options: Record<string, unknown>) =>
        page.evaluate(
          ([o, url]) => {
            try {
              const refresh = () => Promise.resolve("t");
              (globalThis as any).AiAgent.mount(document.body, { frameUrl: url, refresh, ...(o as object) });
              return "mounted";
            } catch (e) {
              return (e as Error).message;
            }
          },
          [options, frameUrl] as const,
        );
      expect(await attempt({ launchCode: "abc" })).toMatch(/give frameUrl or launchCode, not both/);
      expect(await attempt({ frameUrl: undefined, launchCode: "abc" })).toMatch(
        /chatbotId is required with launchCode/,
      );
      expect(await attempt({ refresh: undefined })).toMatch(/refresh must be a function/);
      expect(await attempt({ chatbotId: "another" })).toMatch(/frameUrl is for chatbot .* not another/);
      expect(await attempt({ userId: "u2" })).toMatch(/frameUrl is for user u1, not u2/);
      expect(await attempt({ frameUrl: "/relative" })).toMatch(/frameUrl is not an absolute URL/);
      expect(await page.locator("iframe").count()).toBe(0);
      expect(await attempt({ userId: "u1" })).toBe("mounted");
      const src = await page.locator("iframe").getAttribute("src");
      expect(new URL(src!).searchParams.get("host_origin")).toBe(new URL(service.url).origin);
      // A [TOKEN_REFRESH] that does not come from the mounted iframe never reaches the page's refresh.
      const calls = await page.evaluate(async (url) => {
        let n = 0;
        const box = document.createElement("div");
        document.body.append(box);
        (globalThis as any).AiAgent.mount(box, {
          frameUrl: url,
          refresh: async () => {
            n++;
            return "t";
          },
        });
        window.postMessage({ type: "[TOKEN_REFRESH]", reason: "TokenExpiredError" }, "*");
        // Messages arrive in order: once this one is seen, the one before it has been handled.
        await new Promise<void>((resolve) => {
          addEventListener("message", (e) => e.data === "sentinel" && resolve());
          window.postMessage("sentinel", "*");
        });
        await Promise.resolve();
        return n;
      }, frameUrl);
      expect(calls).toBe(0);
    } finally {
      await context.close();
    }
  });
});
