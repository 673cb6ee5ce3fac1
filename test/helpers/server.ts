import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type App, type AppOverrides, buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { frameRoutes } from "../../src/frame/routes.js";
import { createLogger } from "../../src/log.js";
import type { RunningServer } from "../../src/protocol/http/server.js";
import { TestClock } from "./clock.js";
import { atFileEnd, removeAtExit } from "./leftovers.js";
import { pooledUrl } from "./pgbouncer.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";

/** An account made for a test, with its secrets. */
export interface TestAccount {
  accountId: string;
  email: string;
  password: string;
  apiKey: string;
  chatbotId: string;
}

/** A real server on a loopback port over a real SQLite file (or a PostgreSQL database of its own). */
export interface TestServer {
  url: string;
  app: App;
  server: RunningServer;
  clock: TestClock;
  dbPath: string;
  dir: string;
  /** Every log line the server wrote. */
  logs: string[];
  /** Creates an account with a chatbot (allowed origins default to https://shop.example) and an API key. */
  account(opts?: {
    origins?: string[];
    knowledge?: { title: string; url: string; snippet: string }[];
  }): Promise<TestAccount>;
  /** Stops the server and closes the database (the directory is kept unless remove is true). */
  close(remove?: boolean): Promise<void>;
}

let counter = 0;

/**
 * The customer write limits off (AIAGENT_RATE_LIMIT_*), for a test whose one customer writes a load on purpose; the
 * limits themselves are tried in test/hardening/customer-limits.test.ts.
 */
export const NO_CUSTOMER_LIMITS = {
  AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE: "0",
  AIAGENT_RATE_LIMIT_CONVERSATIONS_PER_HOUR: "0",
} as const;

/**
 * A relay nobody answers on (AIAGENT_SMTP_URL): mails are queued and wait in the outbox, so the e-mail routes answer
 * as with a real relay; no transcript limit. test/mail sends to a real SMTP server on loopback.
 */
export const UNANSWERED_RELAY = {
  AIAGENT_SMTP_URL: "smtp://127.0.0.1:9",
  AIAGENT_MAIL_FROM: "support@example.com",
  AIAGENT_MAIL_LINK_BASE: "http://127.0.0.1:9",
  AIAGENT_MAIL_TRANSCRIPTS_PER_HOUR: "0",
} as const;

/** Creates an account on the app with a chatbot ("Test bot"; origins default to https://shop.example) and an API key. */
export async function createTestAccount(
  app: App,
  email: string,
  o: { origins?: string[]; knowledge?: { title: string; url: string; snippet: string }[] } = {},
): Promise<TestAccount> {
  const password = "correct horse battery staple";
  const a = await app.accounts.createAccount(email, password);
  const chatbot = await app.accounts.createChatbot(
    email,
    "Test bot",
    o.origins ?? ["https://shop.example"],
    o.knowledge ?? [],
  );
  const key = await app.accounts.createApiKey(email);
  return { accountId: a.accountId, email, password, apiKey: key.clientApiKey, chatbotId: chatbot.chatbotId };
}
const pgDatabases = new Map<string, TestDatabase>();
/** Servers started and not closed yet, and the folders startServer made (each with its exit-time remover). */
const openServers = new Set<TestServer>();
const madeDirs = new Map<string, () => void>();

/**
 * Closes what a test file left behind (run after the file by test/setup/leftovers.ts): servers a failed or timed-out
 * test never closed, their databases, and the folders startServer made. A folder also goes at process exit.
 */
async function closeLeftovers(): Promise<void> {
  for (const s of [...openServers]) await s.close(true).catch(() => undefined);
  for (const [dir, db] of [...pgDatabases]) {
    pgDatabases.delete(dir);
    await db.drop().catch(() => undefined);
  }
  for (const [dir, forget] of [...madeDirs]) {
    rmSync(dir, { recursive: true, force: true });
    forget();
    madeDirs.delete(dir);
  }
}

atFileEnd(closeLeftovers);

/** Starts the whole service, as `aiagent serve` would, on 127.0.0.1 with a fresh database. */
export async function startServer(
  opts: { env?: Record<string, string>; dir?: string; overrides?: AppOverrides } = {},
): Promise<TestServer> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), "aiagent-test-"));
  if (!opts.dir) madeDirs.set(dir, removeAtExit(dir));
  const dbPath = join(dir, "aiagent.db");
  // AIAGENT_TEST_BACKEND=postgres (the api-postgres test project): the same suite on a database of its own.
  // A restart on the same directory finds the same database; the run's teardown drops them all.
  // AIAGENT_TEST_BACKEND=pgbouncer (api-pgbouncer): the same, through the run's PgBouncer in transaction pooling
  // mode, LISTEN on a direct connection.
  const backend = process.env.AIAGENT_TEST_BACKEND;
  let pgDatabase: TestDatabase | undefined;
  if (backend === "postgres" || backend === "pgbouncer") {
    pgDatabase = pgDatabases.get(dir) ?? (await createTestDatabase());
    pgDatabases.set(dir, pgDatabase);
  }
  const config = loadConfig({
    AIAGENT_DB: dbPath,
    AIAGENT_PORT: "0",
    AIAGENT_LOG_LEVEL: "debug",
    ...(pgDatabase ? { AIAGENT_DATABASE_URL: pgDatabase.url } : {}),
    ...(pgDatabase && backend === "pgbouncer"
      ? {
          AIAGENT_DATABASE_URL: pooledUrl(pgDatabase.url),
          AIAGENT_DATABASE_LISTEN_URL: pgDatabase.url,
          AIAGENT_DATABASE_POOLER: "transaction",
        }
      : {}),
    ...opts.env,
  });
  const logs: string[] = [];
  const clock = (opts.overrides?.clock as TestClock | undefined) ?? new TestClock();
  const app = await buildApp(
    config,
    createLogger(config.logLevel, (l) => void logs.push(l)),
    { extraRoutes: frameRoutes, ...opts.overrides, clock },
  );
  const server = await app.listen();
  const started: TestServer = {
    url: server.url,
    app,
    server,
    clock,
    dbPath,
    dir,
    logs,
    account: (o = {}) =>
      createTestAccount(app, `owner${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`, o),
    async close(remove = false) {
      openServers.delete(started);
      await server.close(1000);
      await app.close();
      if (remove && pgDatabase) {
        pgDatabases.delete(dir);
        await pgDatabase.drop();
      }
      if (remove) {
        rmSync(dir, { recursive: true, force: true });
        madeDirs.get(dir)?.();
        madeDirs.delete(dir);
      }
    },
  };
  openServers.add(started);
  return started;
}
