import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { aiagentCommand } from "../helpers/command.js";
import { issueTokens, ownerOf, send } from "../helpers/flows.js";
import { createTestDatabase, postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount } from "../helpers/server.js";
import { scaled } from "../helpers/time-scale.js";
import { eventually, WebhookReceiver } from "../helpers/webhook-receiver.js";

// Instance A (a child process) is SIGKILLed while its attempt of a delivery hangs on the receiver. Instance B, on
// the same PostgreSQL, delivers that event within 5 s of the kill (A's claim lapses, unrenewed), and another
// conversation's event written meanwhile goes out within 2 s. The attempt the kill cut is counted.
const skip = await postgresSkipReason();
if (skip) console.warn(`a killed claim holder on PostgreSQL skipped: ${skip}`);

const ROOT = resolve(import.meta.dirname, "../..");
const ENV = {
  AIAGENT_SECRETS: "a-test-secret-for-a-killed-claim-holder-0123",
  // An attempt may take long: the old lease (2 x timeout + 1 s) would hold the conversation for a minute.
  AIAGENT_WEBHOOK_TIMEOUT_MS: "30000",
  AIAGENT_WEBHOOK_POLL_MS: "20",
  AIAGENT_LOG_LEVEL: "info",
};
const dir = mkdtempSync(join(tmpdir(), "aiagent-claim-killed-"));
const receiver = new WebhookReceiver();
const cleanups: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

function serveChild(databaseUrl: string): Promise<{ url: string; proc: ChildProcess; exited: Promise<unknown> }> {
  const proc = spawn(process.execPath, [...aiagentCommand(), "serve", "--port", "0"], {
    cwd: ROOT,
    env: { ...process.env, ...ENV, AIAGENT_HOST: "127.0.0.1", AIAGENT_DATABASE_URL: databaseUrl },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(async () => proc.exitCode === null && proc.kill("SIGKILL"));
  const exited = new Promise((r) => proc.once("exit", r));
  return new Promise((ok, fail) => {
    let out = "";
    proc.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (m) ok({ url: m[1]!, proc, exited });
    });
    proc.stderr!.on("data", (c: Buffer) => void (out += c.toString("utf8")));
    void exited.then(() => fail(new Error(`server exited: ${out}`)));
  });
}

async function serveHere(databaseUrl: string): Promise<{ app: App; server: RunningServer }> {
  const config = loadConfig({
    ...ENV,
    AIAGENT_DATABASE_URL: databaseUrl,
    AIAGENT_DB: join(dir, "unused.db"),
    AIAGENT_PORT: "0",
    AIAGENT_LOG_LEVEL: "silent",
  });
  const app = await buildApp(config, createLogger("silent"));
  const server = await app.listen();
  cleanups.push(async () => {
    await server.close(1000);
    await app.close();
  });
  return { app, server };
}

describe.skipIf(skip !== undefined)("a webhook claim whose holder is killed", () => {
  it(
    "is delivered by another instance within 5 s; other conversations are not held; the cut attempt counts",
    async () => {
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      await receiver.up();
      cleanups.push(() => receiver.down());
      const setup = await buildApp(
        loadConfig({ ...ENV, AIAGENT_DATABASE_URL: database.url, AIAGENT_LOG_LEVEL: "silent" }),
        createLogger("silent"),
        { dispatch: false },
      );
      const acc = await createTestAccount(setup, "owner@claim-killed.example");
      await setup.webhooks.createEndpoint(ownerOf(acc), {
        url: receiver.url,
        eventTypes: ["conversation.started"],
        description: "",
      });
      await setup.close();

      receiver.stall = true;
      const a = await serveChild(database.url);
      const held = await send(a.url, (await issueTokens(a.url, acc, "held")).access_token, "held by A");
      await eventually("A's attempt in flight", () => receiver.stalled > 0);
      // B runs beside A before the kill (A renews its claim, so B leaves the held delivery alone), so that what
      // follows the kill is not B's start-up: only the lapse of A's claim.
      const b = await serveHere(database.url);
      const otherToken = (await issueTokens(b.server.url, acc, "other")).access_token;
      a.proc.kill("SIGKILL");
      await a.exited;
      const killedAt = Date.now();
      receiver.stall = false;

      // Another conversation, written through B at once, is not held by the claim A's death left behind.
      const other = await send(b.server.url, otherToken, "not held");
      const wroteAt = Date.now();
      const delivered = (c: string) =>
        receiver.accepted().some((r) => r.event.data.conversation_id === c && r.event.type === "conversation.started");
      await eventually("the other conversation's event delivered", () => delivered(other.conversation_id));
      expect(Date.now() - wroteAt).toBeLessThan(2000);
      await eventually("the held conversation's event delivered by B", () => delivered(held.conversation_id));
      expect(Date.now() - killedAt).toBeLessThan(5000);

      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      try {
        const row = async () =>
          (
            await c.query(
              `SELECT d.attempts, d.status FROM webhook_deliveries d JOIN events e ON e.account_id = d.account_id
             AND e.seq = d.event_seq WHERE e.order_key = $1 AND e.type = 'conversation.started'`,
              [held.conversation_id],
            )
          ).rows;
        // B records its attempt once the receiver's answer reaches it, a moment after the receiver saw the request.
        await eventually("B's attempt recorded", async () => (await row())[0]?.status === "delivered");
        // A's attempt (cut by the kill, it may have reached the receiver: it did) and B's.
        expect(await row()).toEqual([{ attempts: 2, status: "delivered" }]);
      } finally {
        await c.end();
      }
    },
    scaled(90_000),
  );
});
