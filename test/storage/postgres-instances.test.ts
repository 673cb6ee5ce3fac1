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
import { postJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";
import { pgbouncerSkipReason, pooledUrl } from "../helpers/pgbouncer.js";
import { adminUrl, createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";

// Two instances of the service on one PostgreSQL database, each with its own HTTP server on a loopback port.
const skip = await postgresSkipReason();
if (skip) console.warn(`instances on PostgreSQL skipped: ${skip}`);

const SECRET = "a-test-secret-for-two-instances-0123456789";

// Each case twice: straight to the server, and through the run's PgBouncer in transaction pooling mode, where
// LISTEN (live updates, key rotations) takes the direct URL AIAGENT_DATABASE_LISTEN_URL.
const pooledSkip = skip ?? pgbouncerSkipReason();
if (!skip && pooledSkip) console.warn(`instances on PostgreSQL through PgBouncer skipped: ${pooledSkip}`);

for (const pooled of [false, true])
  describe.skipIf((pooled ? pooledSkip : skip) !== undefined)(
    `two instances on one PostgreSQL${pooled ? " through PgBouncer (transaction pooling)" : ""}`,
    () => {
      let database: TestDatabase;
      const dir = mkdtempSync(join(tmpdir(), "aiagent-instances-"));
      const instances: { app: App; server: RunningServer; url: string }[] = [];
      let acc: TestAccount;

      beforeAll(async () => {
        database = await createTestDatabase();
        for (const port of [0, 0]) {
          const config = loadConfig({
            AIAGENT_DATABASE_URL: database.url,
            ...(pooled
              ? {
                  AIAGENT_DATABASE_URL: pooledUrl(database.url),
                  AIAGENT_DATABASE_LISTEN_URL: database.url,
                  AIAGENT_DATABASE_POOLER: "transaction",
                }
              : {}),
            AIAGENT_DB: join(dir, "unused.db"),
            AIAGENT_PORT: String(port),
            AIAGENT_SECRETS: SECRET,
            AIAGENT_LOG_LEVEL: "silent",
          });
          const app = await buildApp(config, createLogger("silent"));
          const server = await app.listen();
          instances.push({ app, server, url: server.url });
        }
        acc = await createTestAccount(instances[0]!.app, "owner@instances.example");
      });

      afterAll(async () => {
        for (const i of instances) {
          await i.server.close(1000);
          await i.app.close();
        }
        await database?.drop();
        rmSync(dir, { recursive: true, force: true });
      });

      it("an operator's reply written through instance A reaches a frame watching through instance B", async () => {
        const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
        const t = await issueTokens(b.url, acc, "cust-1");
        const conv = await send(a.url, t.access_token, "hello from the frame");
        const watch = await openNdjson(
          `${b.url}/watch_conversation?${new URLSearchParams({ conversation_id: conv.conversation_id, after_message_order: "2", access_token: t.access_token })}`,
        );
        expect((await watch.next())?.result?.conversation).toBeDefined();
        const auth = { authorization: `Bearer ${await idToken(a.url, acc)}` };
        const reply = await postJson(
          a.url,
          "/reply_to_conversation",
          { conversation_id: conv.conversation_id, content: "Sam from support here" },
          auth,
        );
        expect(reply.status).toBe(200);
        const line = await watch.next();
        expect(line?.result?.message).toMatchObject({
          role: "operator",
          content: "Sam from support here",
          message_order: 3,
        });
        await watch.cancel();
      });

      it("a refresh token revoked through instance A is refused by instance B on its next call", async () => {
        const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
        const t = await issueTokens(a.url, acc, "cust-2");
        const refresh = () =>
          postJson(b.url, "/ai_agent/refresh_token", {
            user_id: "cust-2",
            chatbot_id: acc.chatbotId,
            refresh_token: t.refresh_token,
          });
        expect((await refresh()).status).toBe(200);
        expect(await a.app.tokens.revocations.revoke({ accountId: acc.accountId, userId: "cust-2" })).toBe(1);
        expect((await refresh()).status).toBe(401);
        // The live access token of the revoked user stops on B too.
        expect((await send(b.url, t.access_token, "still there?").catch((e: Error) => e.message)) as string).toMatch(
          /401/,
        );
      });

      it("three writers through both instances on one conversation: every acknowledged message once, orders gap-free", async () => {
        const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
        const t = await issueTokens(a.url, acc, "cust-3");
        const first = await send(a.url, t.access_token, "start");
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            send((i % 2 ? a : b).url, t.access_token, `m${i}`, first.conversation_id),
          ),
        );
        const orders = results
          .flatMap((r) => [r.user_message.message_order, r.reply?.message_order])
          .filter((o) => o !== undefined);
        const all = [1, 2, ...orders].sort((x, y) => x - y);
        expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
      });

      it("wrong API keys spread over both instances end in 429 at the same threshold as on one (shared counters)", async () => {
        const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
        // A chatbot of its own: the (address, chatbot) pair ends up blocked.
        const bot = await a.app.accounts.createChatbot(acc.email, "guarded", ["https://shop.example"], []);
        const statuses: number[] = [];
        for (let i = 0; i < 21; i++) {
          const r = await postJson((i % 2 ? a : b).url, "/ai_agent/get_access_token", {
            user_id: "guess",
            chatbot_id: bot.chatbotId,
            client_api_key: `cak_wrong${i}`,
          });
          statuses.push(r.status);
        }
        // The default: 20 failed credentials per (address, chatbot), counted across instances.
        expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
        expect(statuses[20]).toBe(429);
      });

      it("a signing key rotated on one instance signs and verifies on the other at once (announced, not polled)", async () => {
        const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
        const kid = await a.app.keys.rotate();
        // The announcement arrives asynchronously: wait for it, bounded (the refresh interval is 30 s, far beyond this).
        for (let i = 0; i < 100 && b.app.keys.current.kid !== kid; i++) await new Promise((r) => setTimeout(r, 20));
        expect(b.app.keys.current.kid).toBe(kid);
        const t = await b.app.tokens.idTokens.getIdToken({ email: acc.email, clientApiKey: acc.apiKey });
        const header = JSON.parse(Buffer.from(t.idToken.split(".")[0]!, "base64url").toString()) as { kid: string };
        expect(header.kid).toBe(kid);
        await expect(a.app.tokens.checks.authenticateAccount(t.idToken)).resolves.toMatchObject({ email: acc.email });
      });

      // Through PgBouncer a refused server connection is not the client's error: PgBouncer queues the query for up to
      // its query_wait_timeout (docs/postgres.md), so this case is the direct route's.
      it.skipIf(pooled)(
        "PostgreSQL away (connections killed, new ones refused): 503 with Retry-After, nothing half-written, then recovery",
        async () => {
          const [a] = instances as [(typeof instances)[0]];
          const t = await issueTokens(a.url, acc, "cust-away");
          const conv = await send(a.url, t.access_token, "before");
          const dbName = new URL(database.url).pathname.slice(1);
          const admin = new pg.Client({ connectionString: (await adminUrl())! });
          await admin.connect();
          try {
            await admin.query(`ALTER DATABASE "${dbName}" WITH ALLOW_CONNECTIONS false`);
            await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [dbName]);
            const away = await postJson(
              a.url,
              `/ai_agent/send_message?access_token=${encodeURIComponent(t.access_token)}`,
              {
                conversation_id: conv.conversation_id,
                content: "while away",
              },
            );
            expect(away.status).toBe(503);
            expect(away.headers.get("retry-after")).toBe("5");
            expect(away.body.code).toBe("unavailable");
            expect((await fetch(`${a.url}/readyz`)).status).toBe(503);
          } finally {
            await admin.query(`ALTER DATABASE "${dbName}" WITH ALLOW_CONNECTIONS true`);
            await admin.end();
          }
          // Back by itself: the pool makes new connections.
          expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
          const after = await send(a.url, t.access_token, "after", conv.conversation_id);
          // Nothing half-written while away: the next message takes the next order.
          expect(after.user_message.message_order).toBe(3);
        },
      );
    },
  );
