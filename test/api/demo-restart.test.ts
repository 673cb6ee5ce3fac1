import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { postJson } from "../helpers/http.js";
import { freePort } from "../helpers/ports.js";
import { scaled } from "../helpers/time-scale.js";

// The demo across a real restart of `aiagent serve` on the same SQLite file: the demo key was only ever printed, so
// each start outside production issues a new one (revoking the previous start's) and /demo works again.
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/aiagent");
const dir = mkdtempSync(join(tmpdir(), "aiagent-demo-restart-"));
const db = join(dir, "aiagent.db");
const running = new Set<ChildProcess>();
afterAll(() => {
  for (const p of running) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  proc: ChildProcess;
  /** Everything printed until the demo block was complete. */
  stdout: string;
  /** Everything printed so far. */
  output: () => string;
  key: string;
  url: string;
}

/** Starts `aiagent serve` as the README does and waits for the demo's printed block. */
function serve(port: number, database = db): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIAGENT_DB: database,
    AIAGENT_PORT: String(port),
    AIAGENT_LOG_LEVEL: "warn",
  };
  delete env.NODE_ENV;
  const proc = spawn(BIN, ["serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  running.add(proc);
  return new Promise((done, fail) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => fail(new Error(`no demo block printed: ${stdout} ${stderr}`)), scaled(30_000));
    proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    proc.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString();
      const key = /client_api_key: (\S+)/.exec(stdout)?.[1];
      const url = /demo page:\s+(\S+)\/demo\n/.exec(stdout)?.[1];
      if (key && url) {
        clearTimeout(timer);
        done({ proc, stdout, output: () => stdout, key, url });
      }
    });
    proc.on("exit", (code) => fail(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

function stop(p: ChildProcess): Promise<void> {
  return new Promise((done) => {
    p.once("exit", () => {
      running.delete(p);
      done();
    });
    p.kill("SIGTERM");
  });
}

/** The demo page, and the access token of the frame it embeds (absent when the page says the demo is unavailable). */
async function demoPage(url: string): Promise<{ status: number; html: string; frameUrl?: string }> {
  const r = await fetch(`${url}/demo`);
  const html = await r.text();
  const src = /<iframe id="aiagent-chat"[^>]* src="([^"]+)"/.exec(html)?.[1]?.replaceAll("&#38;", "&");
  return { status: r.status, html, ...(src ? { frameUrl: new URL(src, url).href } : {}) };
}

async function accessTokenWith(url: string, key: string, chatbotId: string) {
  return postJson(url, "/ai_agent/get_access_token", { user_id: "u-1", chatbot_id: chatbotId, client_api_key: key });
}

/** Starts `aiagent serve` with NODE_ENV=production and waits until it is ready. */
async function serveInProduction(port: number): Promise<{ proc: ChildProcess; stdout: () => string }> {
  const env = {
    ...process.env,
    AIAGENT_DB: db,
    AIAGENT_PORT: String(port),
    NODE_ENV: "production",
    // The secret the earlier starts generated beside the database, as an operator moving to production passes it.
    AIAGENT_SECRETS_FILE: `${db}.secret`,
  };
  const proc = spawn(BIN, ["serve"], { env, stdio: ["ignore", "pipe", "ignore"] });
  running.add(proc);
  let stdout = "";
  proc.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  for (let i = 0; i < scaled(600); i++) {
    if ((await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200)
      return { proc, stdout: () => stdout };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`serve did not get ready: ${stdout}`);
}

describe("the demo across a restart", () => {
  it(
    "issues a new demo key on restart, revokes the previous one, keeps other keys, and /demo answers again",
    async () => {
      const port = await freePort();
      const first = await serve(port);
      expect(first.stdout).toContain("First start: a demo account was created");
      const chatbotId = /chatbot_id:\s+(\S+)/.exec(first.stdout)![1]!;
      expect((await demoPage(first.url)).frameUrl).toBeDefined();
      await stop(first.proc);

      // A key the demo account's owner made between starts is theirs: a restart leaves it alone.
      const own = await promisify(execFile)(BIN, ["api-key", "create", "--email", "demo@example.com", "--json"], {
        env: { ...process.env, AIAGENT_DB: db },
      });
      const ownKey = (JSON.parse(own.stdout) as { client_api_key: string }).client_api_key;

      const second = await serve(port);
      try {
        expect(second.stdout).toContain("a new demo API key was issued");
        expect(second.stdout).not.toContain("password");
        expect(second.key).not.toBe(first.key);

        const page = await demoPage(second.url);
        expect(page.status).toBe(200);
        expect(page.html).not.toContain("not available");
        const frame = new URL(page.frameUrl!);
        expect(frame.pathname).toBe(`/chatbot-iframe/${chatbotId}`);
        expect((await fetch(frame)).status).toBe(200);
        // The page's access token works on the frame's routes: the demo chats again.
        const sent = await postJson(
          second.url,
          `/ai_agent/send_message?access_token=${frame.searchParams.get("access_token")}`,
          { content: "Where is my parcel?" },
        );
        expect(sent.status, JSON.stringify(sent.body)).toBe(200);
        expect(sent.body.data.reply.documents[0].title).toBe("Track your parcel");

        expect((await accessTokenWith(second.url, first.key, chatbotId)).status).toBe(401);
        expect((await accessTokenWith(second.url, second.key, chatbotId)).status).toBe(200);
        expect((await accessTokenWith(second.url, ownKey, chatbotId)).status).toBe(200);

        // Stored as a hash only: the printed key is nowhere in the database files.
        for (const f of [db, `${db}-wal`])
          if (existsSync(f)) expect(readFileSync(f).includes(Buffer.from(second.key))).toBe(false);
      } finally {
        await stop(second.proc);
      }

      // Started on another address, the demo says where it can be shown (its chatbot's origin is the first start's).
      const elsewhere = await serve(await freePort());
      try {
        await expect
          .poll(() => elsewhere.output(), { timeout: scaled(10_000) })
          .toContain(`The demo chatbot allows http://127.0.0.1:${port} only: start on that address`);
      } finally {
        await stop(elsewhere.proc);
      }
      expect(second.output()).not.toContain("The demo chatbot allows");

      // In production there is no demo: a restart issues no key, leaves the last one as it was, and /demo is not served.
      const production = await serveInProduction(port);
      try {
        const url = `http://127.0.0.1:${port}`;
        expect((await fetch(`${url}/demo`)).status).toBe(404);
        // Each start's demo key stopped with it; the owner's own key is left as it was.
        expect((await accessTokenWith(url, elsewhere.key, chatbotId)).status).toBe(401);
        expect((await accessTokenWith(url, second.key, chatbotId)).status).toBe(401);
        expect((await accessTokenWith(url, ownKey, chatbotId)).status).toBe(200);
        expect(production.stdout()).not.toContain("client_api_key");
      } finally {
        await stop(production.proc);
      }
    },
    scaled(150_000),
  );

  it(
    "two instances started together on one database each print a demo key that works, and /demo works on both",
    async () => {
      const together = join(dir, "together.db");
      const [a, b] = await Promise.all([serve(await freePort(), together), serve(await freePort(), together)]);
      try {
        expect(a.key).not.toBe(b.key);
        const chatbotId = /chatbot_id:\s+(\S+)/.exec(a.stdout)![1]!;
        for (const started of [a, b]) {
          expect((await accessTokenWith(started.url, started.key, chatbotId)).status).toBe(200);
          const page = await demoPage(started.url);
          expect(page.html).not.toContain("not available");
          expect(page.frameUrl).toBeDefined();
        }
      } finally {
        await Promise.all([stop(a.proc), stop(b.proc)]);
      }
    },
    scaled(60_000),
  );
});
