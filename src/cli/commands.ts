import { readFileSync } from "node:fs";
import { type App, buildApp } from "../app.js";
import { type ConfigFlags, loadConfig } from "../config.js";
import { createLogger } from "../log.js";
import { type OptionName, required, UsageError, type Values } from "./args.js";
import { isoTime, table } from "./format.js";
import { PRIVACY_COMMANDS } from "./privacy-commands.js";

/** Prints one result: the object with --json, the text otherwise. */
export type Out = (obj: Record<string, unknown>, text: string) => void;

/** One administration command: the options it takes and what it does. */
export interface Command {
  options: readonly OptionName[];
  run(values: Values, out: Out): Promise<void>;
}

/** The options that stand for a setting of the service, checked by the same rules as its environment variable. */
export function configFlags(values: Values): ConfigFlags {
  const flags: ConfigFlags = {};
  if (values.db !== undefined) flags.AIAGENT_DB = { flag: "--db", value: values.db };
  if (values.port !== undefined) flags.AIAGENT_PORT = { flag: "--port", value: values.port };
  if (values.host !== undefined) flags.AIAGENT_HOST = { flag: "--host", value: values.host };
  if (values.grace !== undefined) flags.AIAGENT_API_KEY_GRACE = { flag: "--grace", value: values.grace };
  return flags;
}

/** What a command may use: the domain services and the configuration, never the storage back end. */
export type CommandDeps = Pick<App, "accounts" | "tokens" | "keys" | "config" | "privacy" | "retention">;

export async function withApp<T>(values: Values, fn: (app: CommandDeps) => Promise<T> | T): Promise<T> {
  const config = loadConfig(process.env, {}, configFlags(values));
  // The generated-secret warning is the service's to repeat; a command says it only when it made the secret.
  const app = await buildApp(
    config,
    createLogger("warn", (l) => process.stderr.write(l)),
    { secretWarning: "when generated" },
  );
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}

/** A command about one account (--email): the option checked first, then `fn` with the app and the e-mail. */
function withAccount<T>(values: Values, fn: (app: CommandDeps, email: string) => Promise<T>): Promise<T> {
  const email = required(values, "email");
  return withApp(values, (app) => fn(app, email));
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The parsed JSON of a --knowledge file; its shape is the domain's to check. */
function readKnowledge(path: string | undefined): unknown {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`--knowledge: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`--knowledge: ${path} is not JSON (${(e as Error).message})`);
  }
}

const chatbotJson = (c: { chatbotId: string; name: string; allowedOrigins: string[]; knowledge: unknown[] }) => ({
  chatbot_id: c.chatbotId,
  name: c.name,
  allowed_origins: c.allowedOrigins,
  knowledge_snippets: c.knowledge.length,
});

/** Every administration command, by its words. */
export const COMMANDS: Record<string, Command> = {
  ...PRIVACY_COMMANDS,
  "account create": {
    options: ["email", "password"],
    run: (values, out) =>
      withApp(values, async (app) => {
        const a = await app.accounts.createAccount(required(values, "email"), values.password);
        out({ account_id: a.accountId, email: a.email }, `account ${a.email} created (account_id ${a.accountId})`);
      }),
  },
  "account password": {
    options: ["email", "password"],
    run: (values, out) =>
      withApp(values, async (app) => {
        const email = required(values, "email");
        await app.accounts.setOwnerPassword(email, required(values, "password"));
        out({ email }, `password of ${email} set: sign in to the console with it`);
      }),
  },
  "account list": {
    options: [],
    run: (values, out) =>
      withApp(values, async (app) => {
        const accounts = (await collect(app.accounts.listAccounts())).map((a) => ({
          account_id: a.accountId,
          email: a.email,
          active: a.active,
          password: a.passwordHash !== null,
          created_at: isoTime(a.createdAt),
        }));
        out(
          { accounts },
          table(
            ["EMAIL", "ACCOUNT_ID", "PASSWORD", "CREATED"],
            accounts.map((a) => [a.email, a.account_id, a.password ? "yes" : "no", a.created_at ?? ""]),
            "no accounts",
          ),
        );
      }),
  },
  "chatbot create": {
    options: ["email", "name", "allowed-origin", "knowledge"],
    run: (values, out) => {
      const email = required(values, "email");
      const name = required(values, "name");
      const knowledge = readKnowledge(values.knowledge);
      return withApp(values, async (app) => {
        const c = await app.accounts.createChatbot(email, name, values["allowed-origin"] ?? [], knowledge ?? []);
        out(chatbotJson(c), `chatbot ${c.name} created (chatbot_id ${c.chatbotId})`);
      });
    },
  },
  "chatbot list": {
    options: ["email"],
    run: (values, out) =>
      withAccount(values, async (app, email) => {
        const chatbots = (await app.accounts.listChatbots(email)).map((c) => ({
          ...chatbotJson(c),
          active: c.active,
          created_at: isoTime(c.createdAt),
        }));
        out(
          { email, chatbots },
          table(
            ["CHATBOT_ID", "NAME", "SNIPPETS", "ALLOWED ORIGINS"],
            chatbots.map((c) => [
              c.chatbot_id,
              c.name,
              String(c.knowledge_snippets),
              c.allowed_origins.join(" ") || "(none: cannot be embedded; add one with chatbot update)",
            ]),
            `${email} has no chatbots`,
          ),
        );
      }),
  },
  "chatbot update": {
    options: ["email", "chatbot-id", "name", "allowed-origin", "knowledge"],
    run: (values, out) => {
      const email = required(values, "email");
      const chatbotId = required(values, "chatbot-id");
      if (values.name === undefined && values["allowed-origin"] === undefined && values.knowledge === undefined)
        throw new UsageError("nothing to change: give --name, --allowed-origin or --knowledge");
      const knowledge = readKnowledge(values.knowledge);
      return withApp(values, async (app) => {
        const c = await app.accounts.updateChatbot(email, chatbotId, {
          name: values.name,
          allowedOrigins: values["allowed-origin"],
          knowledge,
        });
        out(chatbotJson(c), `chatbot ${c.name} updated (chatbot_id ${c.chatbotId})`);
      });
    },
  },
  "api-key create": {
    options: ["email", "name"],
    run: (values, out) =>
      withAccount(values, async (app, email) => {
        const k = await app.accounts.createApiKey(email, values.name);
        out(
          {
            account_id: (await app.accounts.account(email)).accountId,
            email,
            api_key_id: k.apiKeyId,
            client_api_key: k.clientApiKey,
          },
          `client_api_key (shown once): ${k.clientApiKey}\napi_key_id: ${k.apiKeyId}`,
        );
      }),
  },
  "api-key list": {
    options: ["email"],
    run: (values, out) =>
      withAccount(values, async (app, email) => {
        const keys = (await app.accounts.listApiKeys(email)).map((k) => ({
          api_key_id: k.apiKeyId,
          prefix: k.prefix,
          name: k.name,
          status: k.status,
          created_at: isoTime(k.createdAt),
          last_used_at: isoTime(k.lastUsedAt),
          expires_at: isoTime(k.expiresAt),
          revoked_at: isoTime(k.revokedAt),
        }));
        out(
          { email, api_keys: keys },
          table(
            ["API_KEY_ID", "PREFIX", "STATUS", "CREATED", "LAST USED", "UNTIL", "NAME"],
            keys.map((k) => [
              k.api_key_id,
              `${k.prefix}…`,
              k.status,
              k.created_at ?? "",
              k.last_used_at ?? "never",
              k.revoked_at ?? k.expires_at ?? "",
              k.name,
            ]),
            `${email} has no API keys`,
          ),
        );
      }),
  },
  "api-key rotate": {
    options: ["email", "name", "grace"],
    run: (values, out) =>
      withAccount(values, async (app, email) => {
        const graceSeconds = app.config.apiKeyGraceSeconds;
        const k = await app.accounts.rotateApiKey(email, { graceSeconds, name: values.name });
        const older = k.olderKeys.map((o) => ({
          api_key_id: o.apiKeyId,
          prefix: o.prefix,
          expires_at: isoTime(o.expiresAt),
        }));
        const until =
          graceSeconds === 0
            ? "stopped now"
            : `keep working at most until ${isoTime(Math.max(...k.olderKeys.map((o) => o.expiresAt)))}`;
        out(
          {
            email,
            api_key_id: k.apiKeyId,
            client_api_key: k.clientApiKey,
            grace_seconds: graceSeconds,
            older_keys: older,
          },
          `client_api_key (shown once): ${k.clientApiKey}\napi_key_id: ${k.apiKeyId}\n` +
            (older.length === 0 ? "there were no older keys" : `${older.length} older key(s) ${until}`),
        );
      }),
  },
  "api-key revoke": {
    options: ["email", "id", "all"],
    run: (values, out) => {
      const email = required(values, "email");
      if (values.id !== undefined && values.all) throw new UsageError("give --id or --all, not both");
      if (values.id === undefined && !values.all)
        throw new UsageError("give --id KEY_ID to revoke one key, or --all to revoke every key of the account");
      const target = values.all ? "all" : required(values, "id");
      return withApp(values, async (app) => {
        const n = await app.accounts.revokeApiKey(email, target);
        out(
          { email, revoked: n },
          target !== "all" && n === 0 ? `key ${target} was already revoked` : `${n} key(s) revoked`,
        );
      });
    },
  },
  "tokens revoke": {
    options: ["email", "chatbot-id", "user-id"],
    run: (values, out) =>
      withApp(values, async (app) => {
        const account = await app.accounts.account(required(values, "email"));
        const n = await app.tokens.revocations.revoke({
          accountId: account.accountId,
          chatbotId: values["chatbot-id"],
          userId: values["user-id"],
        });
        out({ revoked: n }, `${n} refresh token(s) revoked; the users' live access tokens are refused from now on`);
      }),
  },
  "keys rotate": {
    options: [],
    run: (values, out) =>
      withApp(values, async (app) => {
        const kid = await app.keys.rotate();
        out(
          { kid },
          `new signing key ${kid}; servers running on this database sign with it and publish it within their AIAGENT_SIGNING_KEY_REFRESH (default 30 s)`,
        );
      }),
  },
};
