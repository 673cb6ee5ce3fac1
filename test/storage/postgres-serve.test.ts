import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { aiagentCommand } from "../helpers/command.js";
import { postJson } from "../helpers/http.js";
import { freePort } from "../helpers/ports.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { scaled } from "../helpers/time-scale.js";

// Real `aiagent serve` processes on loopback ports, one PostgreSQL database; one of them is killed with SIGKILL.
const ROOT = resolve(import.meta.dirname, "../..");
const SECRET = "a-test-secret-for-serve-processes-0123456789";
const skip = await postgresSkipReason();
if (skip) console.warn(`aiagent serve on PostgreSQL skipped: ${skip}`);

describe.skipIf(skip !== undefined)("three `aiagent serve` processes on one PostgreSQL", () => {
  const dir = mkdtempSync(join(tmpdir(), "aiagent-serve-pg-"));
  let database: TestDatabase;
  const procs: ChildProcess[] = [];
  const urls: string[] = [];
  let chatbotId = "";
  let apiKey = "";

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      AIAGENT_DATABASE_URL: database.url,
      AIAGENT_DB: join(dir, "unused.db"),
      AIAGENT_SECRETS: SECRET,
      NODE_ENV: "production",
      AIAGENT_LOG_LEVEL: "error",
    };
    const setup = await buildApp(loadConfig(env), createLogger("silent"));
    await setup.accounts.createAccount("serve@example.com");
    chatbotId = (await setup.accounts.createChatbot("serve@example.com", "bot", ["https://shop.example"], []))
      .chatbotId;
    apiKey = (await setup.accounts.createApiKey("serve@example.com")).clientApiKey;
    await setup.close();
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const proc = spawn(process.execPath, [...aiagentCommand(), "serve"], {
        cwd: ROOT,
        env: { ...process.env, ...env, AIAGENT_PORT: String(port) },
        stdio: "ignore",
      });
      procs.push(proc);
      urls.push(`http://127.0.0.1:${port}`);
    }
    for (const url of urls) {
      let ready = false;
      for (let i = 0; i < 600 && !ready; i++) {
        ready = (await fetch(`${url}/readyz`).catch(() => undefined))?.status === 200;
        if (!ready) await new Promise((r) => setTimeout(r, 100));
      }
      expect(ready, url).toBe(true);
    }
  }, scaled(120_000));

  afterAll(async () => {
    for (const p of procs) p.kill("SIGKILL");
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("SIGKILL of one under load loses no acknowledged write; the others keep serving; message_order has no gap", async () => {
    const tokens = await postJson(urls[0]!, "/ai_agent/get_access_token", {
      user_id: "kill-test",
      chatbot_id: chatbotId,
      client_api_key: apiKey,
    });
    expect(tokens.status).toBe(200);
    const token = encodeURIComponent(tokens.body.data.access_token as string);
    const first = await postJson(urls[0]!, `/ai_agent/send_message?access_token=${token}`, { content: "start" });
    const conversationId = first.body.data.conversation_id as string;
    const acknowledged: string[] = [first.body.data.user_message.message_id, first.body.data.reply.message_id];
    let refused = 0;
    // Three writers, one per instance, 8 messages each; instance 2 is killed while they run.
    await Promise.all(
      urls.map(async (url, w) => {
        for (let i = 0; i < 8; i++) {
          if (w === 0 && i === 3) procs[2]!.kill("SIGKILL");
          const r = await postJson(url, `/ai_agent/send_message?access_token=${token}`, {
            conversation_id: conversationId,
            content: `w${w} m${i}`,
          }).catch(() => undefined);
          if (r?.status === 200) acknowledged.push(r.body.data.user_message.message_id, r.body.data.reply.message_id);
          else refused++;
        }
      }),
    );
    expect(refused).toBeGreaterThan(0);
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ message_id: string; message_order: number }>(
        "SELECT message_id, message_order FROM messages WHERE conversation_id = $1 ORDER BY message_order",
        [conversationId],
      );
      const stored = new Set(rows.map((r) => r.message_id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(rows.map((r) => Number(r.message_order))).toEqual(rows.map((_, i) => i + 1));
    } finally {
      await c.end();
    }
    // The survivors still serve.
    for (const url of urls.slice(0, 2)) expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});
