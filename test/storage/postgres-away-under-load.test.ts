import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, type JsonResponse, postJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { adminUrl, createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { createTestAccount, NO_CUSTOMER_LIMITS, type TestAccount } from "../helpers/server.js";

// PostgreSQL going away under load, as a restart looks to the service: every connection of the service's database
// terminated (pg_terminate_backend), and new ones refused for a while (ALLOW_CONNECTIONS false), while writers and
// readers run through two instances. The machine's shared cluster is never stopped: other suites use it meanwhile.
const skip = await postgresSkipReason();
if (skip) console.warn(`PostgreSQL away under load skipped: ${skip}`);

const SECRET = "a-test-secret-for-postgres-away-0123456789";
const WRITERS = 4;
const MESSAGES = 14;
const OUTAGES = 3;

describe.skipIf(skip !== undefined)("PostgreSQL away under load (connections terminated, then refused)", () => {
  let database: TestDatabase;
  let admin: pg.Client;
  const dir = mkdtempSync(join(tmpdir(), "aiagent-away-"));
  const instances: { app: App; server: RunningServer; url: string }[] = [];
  let acc: TestAccount;
  const errorLogs: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: (await adminUrl())! });
    await admin.connect();
    for (let i = 0; i < 2; i++) {
      const config = loadConfig({
        AIAGENT_DATABASE_URL: database.url,
        AIAGENT_DB: join(dir, "unused.db"),
        AIAGENT_PORT: "0",
        AIAGENT_SECRETS: SECRET,
        AIAGENT_LOG_LEVEL: "silent",
        // One customer writes the load.
        ...NO_CUSTOMER_LIMITS,
      });
      // Errors the service logs (an internal error's cause) explain a finding.
      const app = await buildApp(
        config,
        createLogger("error", (l) => void errorLogs.push(l.slice(0, 2000))),
      );
      const server = await app.listen();
      instances.push({ app, server, url: server.url });
    }
    acc = await createTestAccount(instances[0]!.app, "owner@away.example");
  });

  afterAll(async () => {
    const name = database ? new URL(database.url).pathname.slice(1) : undefined;
    if (name) await admin?.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    for (const i of instances) {
      await i.server.close(1000);
      await i.app.close();
    }
    await admin?.end().catch(() => undefined);
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 503 unavailable with Retry-After or succeeds, writes nothing half, and recovers by itself", async () => {
    const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
    const dbName = new URL(database.url).pathname.slice(1);
    const t = await issueTokens(a.url, acc, "cust-away");
    const first = await send(a.url, t.access_token, "start");
    const conversationId = first.conversation_id;
    const account = { authorization: `Bearer ${await idToken(a.url, acc)}` };
    const acknowledged: string[] = [first.user_message.message_id, first.reply.message_id];
    const unexpected: string[] = [];
    let unavailable = 0;
    let done = 0;
    let writersLeft = WRITERS;
    /** Every answer is a success or 503 unavailable with Retry-After; anything else is a finding. */
    const judge = (what: string, r: JsonResponse | undefined): boolean => {
      done++;
      if (r?.status === 200) return true;
      if (r?.status === 503 && r.body?.code === "unavailable" && Number(r.headers.get("retry-after")) > 0)
        unavailable++;
      else unexpected.push(`${what}: ${r ? `${r.status} ${JSON.stringify(r.body)}` : "no answer"}`);
      return false;
    };

    const writers = Array.from({ length: WRITERS }, async (_, w) => {
      const url = (w % 2 ? b : a).url;
      for (let i = 0; i < MESSAGES; i++) {
        const r = await postJson(url, `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`, {
          conversation_id: conversationId,
          content: `w${w} m${i}`,
        }).catch(() => undefined);
        if (judge(`send w${w} m${i}`, r)) acknowledged.push(r!.body.data.user_message.message_id);
        if (r?.status === 200 && r.body.data.reply) acknowledged.push(r.body.data.reply.message_id);
      }
      writersLeft--;
    });
    // Readers and the token routes (whose abuse counters are in PostgreSQL too) while the writers run.
    const readers = [a, b].map(async (inst) => {
      while (writersLeft > 0) {
        judge(
          "get_messages_for_conversation",
          await getJson(inst.url, "/get_messages_for_conversation", { conversation_id: conversationId }, account).catch(
            () => undefined,
          ),
        );
        judge(
          "refresh_token",
          await postJson(inst.url, "/ai_agent/refresh_token", {
            user_id: "cust-away",
            chatbot_id: acc.chatbotId,
            refresh_token: t.refresh_token,
          }).catch(() => undefined),
        );
      }
    });
    // The outages: each starts once the load has made progress, and lasts until a request has met it.
    const outages = (async () => {
      for (let k = 0; k < OUTAGES && writersLeft > 0; k++) {
        const progressed = done + 6;
        for (let i = 0; i < 2000 && done < progressed && writersLeft > 0; i++)
          await new Promise((r) => setTimeout(r, 5));
        const seen = unavailable;
        await admin.query(`ALTER DATABASE "${dbName}" WITH ALLOW_CONNECTIONS false`);
        try {
          await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [dbName]);
          for (let i = 0; i < 2000 && unavailable === seen && writersLeft > 0; i++)
            await new Promise((r) => setTimeout(r, 5));
        } finally {
          await admin.query(`ALTER DATABASE "${dbName}" WITH ALLOW_CONNECTIONS true`);
        }
        // A restart without refusal: connections killed, new ones welcome at once.
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [dbName]);
      }
    })();
    await Promise.all([...writers, ...readers, outages]);

    expect(unexpected, errorLogs.join("\n")).toEqual([]);
    expect(unavailable).toBeGreaterThan(0);

    // Nothing half-written: every acknowledged message stored once, orders gap-free, the conversation's counters
    // agree with its messages, no message written twice.
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    try {
      const { rows } = await c.query<{ message_id: string; message_order: number; role: string; content: string }>(
        "SELECT message_id, message_order, role, content FROM messages WHERE conversation_id = $1 ORDER BY message_order",
        [conversationId],
      );
      const stored = new Set(rows.map((r) => r.message_id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(rows.map((r) => Number(r.message_order))).toEqual(rows.map((_, i) => i + 1));
      const userContents = rows.filter((r) => r.role === "user").map((r) => r.content);
      expect(new Set(userContents).size).toBe(userContents.length);
      const conv = await c.query<{ message_count: number; last_message_at: string }>(
        "SELECT message_count, last_message_at FROM conversations WHERE conversation_id = $1",
        [conversationId],
      );
      // Each message sets the conversation's last time to its own, in message_order (writers take their time before
      // they queue, so times need not rise with the order): the last message's time is the conversation's.
      const last = await c.query<{ m: string }>(
        "SELECT created_at AS m FROM messages WHERE conversation_id = $1 ORDER BY message_order DESC LIMIT 1",
        [conversationId],
      );
      expect(Number(conv.rows[0]!.message_count)).toBe(rows.length);
      expect(Number(conv.rows[0]!.last_message_at)).toBe(Number(last.rows[0]!.m));
    } finally {
      await c.end();
    }

    // Recovered by itself: both ready and writing, and the LISTEN connections are back (five per instance: signing
    // keys, log announcements, erasures, typing and credential changes), so a reply written through A reaches a
    // watcher on B again, and a revocation through A ends B's streams at once.
    for (const inst of [a, b]) {
      let ready = 0;
      for (let i = 0; i < 200 && ready !== 200; i++) {
        ready = (await fetch(`${inst.url}/readyz`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 25));
      }
      expect(ready).toBe(200);
      await send(inst.url, t.access_token, "after", conversationId);
    }
    let listening = 0;
    for (let i = 0; i < 400 && listening < 10; i++) {
      listening = Number(
        (
          await admin.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %' AND state = 'idle'",
            [dbName],
          )
        ).rows[0].n,
      );
      if (listening < 10) await new Promise((r) => setTimeout(r, 25));
    }
    expect(listening).toBe(10);
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    const lastOrder = Number(
      (
        await reader
          .query("SELECT max(message_order) AS m FROM messages WHERE conversation_id = $1", [conversationId])
          .finally(() => reader.end())
      ).rows[0].m,
    );
    const watch = await openNdjson(
      `${b.url}/watch_conversation?${new URLSearchParams({ conversation_id: conversationId, after_message_order: String(lastOrder), access_token: t.access_token })}`,
    );
    try {
      expect((await watch.next())?.result?.conversation).toBeDefined();
      const reply = await postJson(
        a.url,
        "/reply_to_conversation",
        { conversation_id: conversationId, content: "back" },
        account,
      );
      expect(reply.status).toBe(200);
      expect((await watch.next())?.result?.message).toMatchObject({ role: "operator", content: "back" });
    } finally {
      await watch.cancel();
    }
  });
});
