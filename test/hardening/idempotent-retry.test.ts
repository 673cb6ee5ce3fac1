import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { aiagentCommand } from "../helpers/command.js";
import { scaled } from "../helpers/time-scale.js";

// A writer killed after its store committed and before it answered: the client, with no answer, sends again with
// the same key to a fresh instance and finds its message once. The kill is placed, not timed: the first instance's
// agent calls a model endpoint that never answers, which it does only after the customer's message committed.
const ROOT = resolve(import.meta.dirname, "../..");
const SECRETS = "idempotent-retry-test-key-encryption-secret-0123";
const dir = mkdtempSync(join(tmpdir(), "aiagent-idem-kill-"));
const dbPath = join(dir, "aiagent.db");
const children: ChildProcess[] = [];
let model: Server | undefined;

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  model?.close();
  model?.closeAllConnections();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts `aiagent serve` on the test database in a child process; resolves with its URL once it listens. */
function serve(env: Record<string, string>): Promise<{ url: string; proc: ChildProcess; out: () => string }> {
  const proc = spawn(process.execPath, [...aiagentCommand(), "serve", "--db", dbPath, "--port", "0"], {
    cwd: ROOT,
    env: { ...process.env, AIAGENT_HOST: "127.0.0.1", AIAGENT_SECRETS: SECRETS, AIAGENT_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(proc);
  return new Promise((ok, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`server did not start: ${out}`)), 30_000);
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok({ url: m[1]!, proc, out: () => out });
      }
    });
    proc.stderr!.on("data", (c: Buffer) => void (out += c.toString("utf8")));
    proc.once("exit", () => fail(new Error(`server exited: ${out}`)));
  });
}

const stored = (content: string) => {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM messages WHERE content = ?").get(content) as { n: number }).n;
  } finally {
    db.close();
  }
};

it(
  "killed after the commit and before the answer, a send retried with its key stores one message",
  async () => {
    const setup = await buildApp(loadConfig({ AIAGENT_DB: dbPath, AIAGENT_SECRETS: SECRETS }), createLogger("silent"));
    const email = "idem-kill@example.com";
    await setup.accounts.createAccount(email);
    const chatbotId = (await setup.accounts.createChatbot(email, "bot", ["https://shop.example"], [])).chatbotId;
    const apiKey = (await setup.accounts.createApiKey(email)).clientApiKey;
    await setup.close();

    // A model endpoint that takes requests and never answers: the call is the sign the message is committed.
    let called: () => void = () => undefined;
    const modelCalled = new Promise<void>((r) => (called = r));
    model = createServer(() => called());
    await new Promise<void>((r) => model!.listen(0, "127.0.0.1", r));
    const address = model.address() as { port: number };

    const first = await serve({ AIAGENT_LLM_BASE_URL: `http://127.0.0.1:${address.port}/v1` });
    const token = await fetch(`${first.url}/ai_agent/get_access_token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user_id: "killed-writer", chatbot_id: chatbotId, client_api_key: apiKey }),
    }).then((r) => r.json() as Promise<{ data: { access_token: string } }>);
    const sendUrl = (base: string) =>
      `${base}/ai_agent/send_message?access_token=${encodeURIComponent(token.data.access_token)}`;
    const request = {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": "order-7f3a-retry-me" },
      body: JSON.stringify({ content: "sent once, answered never" }),
    };
    const lost = fetch(sendUrl(first.url), request).then(
      (r) => `answered ${r.status}`,
      () => "cut",
    );
    const sign = await Promise.race([
      modelCalled.then(() => "model called"),
      new Promise((r) => setTimeout(() => r("no call"), 20_000)),
    ]);
    expect(sign).toBe("model called");
    const exited = new Promise((r) => first.proc.once("exit", r));
    first.proc.kill("SIGKILL");
    await exited;
    expect(await lost).toBe("cut");
    expect(stored("sent once, answered never")).toBe(1);

    // The client retries with the same key on another instance (here: the same database, restarted, offline agent).
    const second = await serve({});
    const retry = await fetch(sendUrl(second.url), request);
    expect(retry.status, second.out().slice(-3000)).toBe(200);
    const body = (await retry.json()) as { data: { user_message: { content: string }; reply?: { role: string } } };
    expect(body.data.user_message.content).toBe("sent once, answered never");
    // The reply the killed instance never wrote is written now, once.
    expect(body.data.reply?.role).toBe("assistant");
    expect(stored("sent once, answered never")).toBe(1);
    const again = await fetch(sendUrl(second.url), request);
    expect(((await again.json()) as typeof body).data.reply).toEqual(body.data.reply);
    expect(stored("sent once, answered never")).toBe(1);
    second.proc.kill("SIGTERM");
  },
  scaled(120_000),
);
