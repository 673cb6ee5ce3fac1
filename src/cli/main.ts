#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { type App, buildApp } from "../app.js";
import { bootstrapDemo } from "../bootstrap.js";
import { ConfigError, loadConfig } from "../config.js";
import type { KnowledgeSnippet } from "../domain/account/repository.js";
import { isDomainError } from "../domain/errors.js";
import { frameRoutes } from "../frame/routes.js";
import { createLogger } from "../log.js";
import { DatabaseOpenError } from "../storage/sqlite/index.js";
import { type ParsedArgs, parse, required, UsageError } from "./args.js";
import { USAGE } from "./usage.js";

type Out = (obj: Record<string, unknown>, text: string) => void;

async function withApp<T>(values: ParsedArgs["values"], fn: (app: App) => Promise<T> | T): Promise<T> {
  const config = loadConfig(process.env, values.db ? { dbPath: values.db } : {});
  const app = await buildApp(
    config,
    createLogger("warn", (l) => process.stderr.write(l)),
  );
  try {
    return await fn(app);
  } finally {
    app.close();
  }
}

async function serve(values: ParsedArgs["values"]): Promise<void> {
  const overrides: Record<string, unknown> = {};
  if (values.db) overrides.dbPath = values.db;
  if (values.port) overrides.port = Number(values.port);
  if (values.host) overrides.host = values.host;
  const config = loadConfig(process.env, overrides);
  const log = createLogger(config.logLevel);
  // Set by the demo bootstrap below (a first start, or a restart with the demo account present); /demo reads it.
  let demoCredentials: { chatbotId: string; clientApiKey: string } | undefined;
  const app = await buildApp(config, log, { extraRoutes: (a) => frameRoutes(a, { demo: () => demoCredentials }) });
  const server = await app.listen();
  const publicUrl = config.baseUrl ?? server.url;
  if (!config.production) {
    const demo = await bootstrapDemo(app, config.appUrl ?? publicUrl);
    if (demo) {
      demoCredentials = demo;
      // Printed once, to the terminal of the person who started the service; never logged again.
      process.stdout.write(
        demo.firstStart
          ? `\nFirst start: a demo account was created (shown only now).\n  e-mail:         ${demo.email}\n  password:       ${demo.password}\n  chatbot_id:     ${demo.chatbotId}\n  client_api_key: ${demo.clientApiKey}\n  demo page:      ${publicUrl}/demo\n\n`
          : `\nDemo: a new demo API key was issued and the previous start's demo key revoked (shown only now).\n  e-mail:         ${demo.email}\n  chatbot_id:     ${demo.chatbotId}\n  client_api_key: ${demo.clientApiKey}\n  demo page:      ${publicUrl}/demo\n\n`,
      );
      // The frame may only be embedded by the chatbot's allowed origins, fixed on the first start.
      const here = new URL(config.appUrl ?? publicUrl).origin;
      if (!demo.allowedOrigins.includes(here))
        process.stdout.write(
          `The demo chatbot allows ${demo.allowedOrigins.join(", ")} only: start on that address to use ${publicUrl}/demo.\n\n`,
        );
    }
  }
  log.info("listening", { url: server.url, db: config.dbPath, synchronous: config.synchronous });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await server.close(10_000);
    try {
      app.db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      app.close();
    }
    log.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

async function run(argv: string[], out: Out): Promise<void> {
  const { values, positionals } = parse(argv);
  const [cmd, sub, ...rest] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(USAGE);
    if (!cmd && !values.help) throw new UsageError("a command is required");
    return;
  }
  if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  const key = sub ? `${cmd} ${sub}` : cmd;
  switch (key) {
    case "serve":
      return serve(values);
    case "account create":
      return withApp(values, async (app) => {
        const a = await app.accounts.createAccount(required(values, "email"), values.password);
        out({ account_id: a.accountId, email: a.email }, `account ${a.email} created (account_id ${a.accountId})`);
      });
    case "chatbot create":
      return withApp(values, (app) => {
        const knowledge = values.knowledge
          ? (JSON.parse(readFileSync(values.knowledge, "utf8")) as KnowledgeSnippet[])
          : [];
        const c = app.accounts.createChatbot(
          required(values, "email"),
          required(values, "name"),
          values["allowed-origin"] ?? [],
          knowledge,
        );
        out(
          { chatbot_id: c.chatbotId, name: c.name, allowed_origins: c.allowedOrigins },
          `chatbot ${c.name} created (chatbot_id ${c.chatbotId})`,
        );
      });
    case "api-key create":
      return withApp(values, (app) => {
        const email = required(values, "email");
        const k = app.accounts.createApiKey(email);
        out(
          {
            account_id: app.accounts.account(email).accountId,
            email,
            api_key_id: k.apiKeyId,
            client_api_key: k.clientApiKey,
          },
          `client_api_key (shown once): ${k.clientApiKey}\napi_key_id: ${k.apiKeyId}`,
        );
      });
    case "api-key rotate":
      return withApp(values, (app) => {
        const email = required(values, "email");
        const k = app.accounts.rotateApiKey(email);
        out(
          { email, api_key_id: k.apiKeyId, client_api_key: k.clientApiKey, revoked: k.revoked },
          `client_api_key (shown once): ${k.clientApiKey}\n${k.revoked} older key(s) revoked`,
        );
      });
    case "api-key revoke":
      return withApp(values, (app) => {
        const n = app.accounts.revokeApiKey(required(values, "email"), values.id);
        out({ revoked: n }, `${n} key(s) revoked`);
      });
    case "tokens revoke":
      return withApp(values, (app) => {
        const account = app.accounts.account(required(values, "email"));
        const n = app.tokens.revoke({
          accountId: account.accountId,
          chatbotId: values["chatbot-id"],
          userId: values["user-id"],
        });
        out({ revoked: n }, `${n} refresh token(s) revoked; the users' live access tokens are refused from now on`);
      });
    case "keys rotate":
      return withApp(values, async (app) => {
        const kid = await app.keys.rotate();
        out({ kid }, `new signing key ${kid}`);
      });
    case "seed": {
      const { seed, seedSize } = await import("./seed.js");
      return withApp(values, async (app) => {
        const r = await seed(app, { email: required(values, "email"), size: seedSize(values) });
        out(
          r as unknown as Record<string, unknown>,
          `seeded ${r.contacts} contacts, ${r.conversations} conversations, ${r.messages} messages (+${r.small_accounts} small accounts) in ${r.seconds.toFixed(1)} s`,
        );
      });
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(key)}`);
  }
}

const json = process.argv.includes("--json");
const out: Out = (obj, text) => process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${text}\n`);
run(process.argv.slice(2), out).catch((e: unknown) => {
  const message =
    e instanceof UsageError ||
    e instanceof ConfigError ||
    e instanceof DatabaseOpenError ||
    isDomainError(e) ||
    e instanceof SyntaxError
      ? e.message
      : String(e);
  if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.stderr.write(`aiagent: ${message}\n${e instanceof UsageError ? "Run 'aiagent --help' for usage.\n" : ""}`);
  process.exit(e instanceof UsageError ? 2 : 1);
});
