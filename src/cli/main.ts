#!/usr/bin/env node
import { existsSync } from "node:fs";
import { buildApp } from "../app.js";
import { bootstrapDemo, DEMO_EMAIL } from "../bootstrap.js";
import { ConfigError, loadConfig, redactUrl } from "../config.js";
import { isDomainError } from "../domain/errors.js";
import { StoreOpenError } from "../domain/store.js";
import { createLogger } from "../log.js";
import { startTracing } from "../observability/tracing.js";
import { onlyOptions, type ParsedArgs, parse, UsageError } from "./args.js";
import { BACKUP_COMMANDS } from "./backup.js";
import { COMMANDS, configFlags, type Out } from "./commands.js";
import { boundHeapGrowth } from "./heap.js";
import { servicePages } from "./pages.js";
import { USAGE } from "./usage.js";
import { buildWhenDatabaseAnswers } from "./wait-for-database.js";

async function serve(values: ParsedArgs["values"]): Promise<void> {
  boundHeapGrowth();
  const config = loadConfig(process.env, {}, configFlags(values));
  const log = createLogger(config.logLevel);
  // OTEL_* variables may ask for traces (docs/operations.md); spans still queued are sent before exit.
  const tracing = await startTracing();
  // Set by the demo bootstrap below (a first start, or a restart with the demo account present); /demo reads it.
  let demoCredentials: { chatbotId: string; clientApiKey: string; apiKeyId: string } | undefined;
  // PostgreSQL away at start is waited for (with back-off, /readyz saying so), never a reason to exit.
  const app = await buildWhenDatabaseAnswers(config, log, () =>
    buildApp(config, log, { extraRoutes: (a) => servicePages(a, () => demoCredentials) }),
  );
  const server = await app.listen();
  const publicUrl = config.baseUrl ?? server.url;
  if (!config.production) {
    const demo = await bootstrapDemo(app, config.appUrl ?? publicUrl);
    if (demo) {
      demoCredentials = demo;
      // Printed once, to the terminal of the person who started the service; never logged again.
      process.stdout.write(
        demo.firstStart
          ? `\nFirst start: a demo account was created (shown only now).\n  e-mail:         ${demo.email}\n  password:       ${demo.password}\n  chatbot_id:     ${demo.chatbotId}\n  client_api_key: ${demo.clientApiKey}\n  demo page:      ${publicUrl}/demo\n  console:        ${config.appUrl ?? publicUrl}/console\n\n`
          : `\nDemo: a new demo API key was issued and the previous start's demo key revoked (shown only now).\n  e-mail:         ${demo.email}\n  chatbot_id:     ${demo.chatbotId}\n  client_api_key: ${demo.clientApiKey}\n  demo page:      ${publicUrl}/demo\n  console:        ${config.appUrl ?? publicUrl}/console\n\n`,
      );
      // The frame may only be embedded by the chatbot's allowed origins, fixed on the first start.
      const here = new URL(config.appUrl ?? publicUrl).origin;
      if (!demo.allowedOrigins.includes(here))
        process.stdout.write(
          `The demo chatbot allows ${demo.allowedOrigins.join(", ")} only: start on that address to use ${publicUrl}/demo.\n\n`,
        );
    }
  }
  log.info("listening", {
    url: server.url,
    ...(config.databaseUrl
      ? { db: redactUrl(config.databaseUrl) }
      : { db: config.dbPath, synchronous: config.synchronous }),
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await server.close(10_000);
    // The demo key this start printed stops with it (an instance started together with it keeps its own).
    if (demoCredentials)
      await app.accounts
        .revokeApiKey(DEMO_EMAIL, demoCredentials.apiKeyId)
        .catch((e: unknown) => log.warn("the demo key could not be revoked", { error: (e as Error).message }));
    await app.close();
    await tracing?.shutdown().catch(() => undefined);
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
  if (cmd === "backup" || cmd === "restore") {
    if (sub === undefined) throw new UsageError(`'${cmd}' needs a FILE`);
    if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
    onlyOptions(cmd, values, []);
    return BACKUP_COMMANDS[cmd](values, sub, out);
  }
  if (cmd === "serve") {
    if (sub !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(sub)}`);
  } else if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
  const key = sub ? `${cmd} ${sub}` : cmd;
  if (key === "serve") {
    onlyOptions(key, values, ["port", "host"]);
    return serve(values);
  }
  const command = COMMANDS[key];
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(key)}`);
  onlyOptions(key, values, command.options);
  if (READ_COMMANDS.has(key)) mustExist(values);
  return command.run(values, out);
}

/** Commands that only read: on a database that does not exist they make none (nor its secret file), they refuse. */
const READ_COMMANDS = new Set(["account list", "chatbot list", "api-key list", "contact export"]);

/** Refuses when the SQLite file --db or AIAGENT_DB names does not exist: most likely a mistyped path. */
function mustExist(values: ParsedArgs["values"]): void {
  const config = loadConfig(process.env, {}, configFlags(values));
  if (config.databaseUrl || config.dbPath === ":memory:" || existsSync(config.dbPath)) return;
  throw new StoreOpenError(
    `database ${config.dbPath} does not exist: check --db (or AIAGENT_DB); a command that only reads creates none`,
  );
}

// The domain names fields as an API would (allowed_origins); the command names them by its options.
const FIELD_OPTIONS: [RegExp, string][] = [
  [/^allowed_origins: /, "--allowed-origin: "],
  [/^chatbot_id: /, "--chatbot-id: "],
  [/^contact_id: /, "--contact-id: "],
  [/^user_id: /, "--user-id: "],
  [/^days: /, "--days: "],
  [/^(email|name|password|grace|id): /, "--$1: "],
  [/^(knowledge\b)/, "--knowledge file: $1"],
];

function inCommandTerms(message: string): string {
  for (const [field, option] of FIELD_OPTIONS) if (field.test(message)) return message.replace(field, option);
  return message;
}

const json = process.argv.includes("--json");
const out: Out = (obj, text) => process.stdout.write(json ? `${JSON.stringify(obj)}\n` : `${text}\n`);
run(process.argv.slice(2), out).catch((e: unknown) => {
  // A malformed command line (an option's value included) exits 2; a refused command, or bad environment, 1.
  const usage = e instanceof UsageError || (e instanceof ConfigError && e.flag !== undefined);
  const message =
    e instanceof UsageError || e instanceof ConfigError || e instanceof StoreOpenError || e instanceof SyntaxError
      ? e.message
      : isDomainError(e)
        ? inCommandTerms(e.message)
        : String(e);
  if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.stderr.write(`aiagent: ${message}\n${usage ? "Run 'aiagent --help' for usage.\n" : ""}`);
  process.exit(usage ? 2 : 1);
});
