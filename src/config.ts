import { resolve } from "node:path";

/** The service's settings, read once from the environment and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dbPath: string;
  readonly baseUrl: string | undefined;
  readonly appUrl: string | undefined;
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
  readonly idTokenTtl: number;
  readonly idleCloseSeconds: number;
  readonly synchronous: "OFF" | "NORMAL" | "FULL";
  readonly production: boolean;
  readonly logLevel: "debug" | "info" | "warn" | "error" | "silent";
  readonly llm: { readonly baseUrl: string; readonly apiKey: string; readonly model: string } | undefined;
}

/** A configuration value that cannot be used; start-up stops with this message. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name} must be a whole number of seconds, at least 1 (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = raw;
  if (!(allowed as readonly string[]).includes(v)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got ${JSON.stringify(raw)})`);
  return v as T;
}

/** Reads and validates the configuration; throws ConfigError naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const portRaw = env.AIAGENT_PORT ?? "8080";
  if (!/^\d+$/.test(portRaw) || Number(portRaw) > 65535) throw new ConfigError(`AIAGENT_PORT must be a port number (got ${JSON.stringify(portRaw)})`);
  const llmBase = env.AIAGENT_LLM_BASE_URL;
  const config: Config = {
    port: Number(portRaw),
    host: env.AIAGENT_HOST ?? "127.0.0.1",
    dbPath: resolve(env.AIAGENT_DB ?? "./data/aiagent.db"),
    baseUrl: env.AIAGENT_BASE_URL || undefined,
    appUrl: env.AIAGENT_APP_URL || undefined,
    accessTokenTtl: seconds(env, "AIAGENT_ACCESS_TOKEN_TTL", 15 * 60),
    refreshTokenTtl: seconds(env, "AIAGENT_REFRESH_TOKEN_TTL", 30 * 24 * 3600),
    idTokenTtl: seconds(env, "AIAGENT_ID_TOKEN_TTL", 60 * 60),
    idleCloseSeconds: seconds(env, "AIAGENT_IDLE_CLOSE", 86400),
    synchronous: oneOf(env, "AIAGENT_SYNCHRONOUS", ["OFF", "NORMAL", "FULL"] as const, "FULL"),
    production: (env.NODE_ENV ?? "") === "production",
    logLevel: oneOf(env, "AIAGENT_LOG_LEVEL", ["debug", "info", "warn", "error", "silent"] as const, "info"),
    llm: llmBase
      ? { baseUrl: llmBase.replace(/\/+$/, ""), apiKey: env.AIAGENT_LLM_API_KEY ?? "", model: env.AIAGENT_LLM_MODEL ?? "gpt-4o-mini" }
      : undefined,
    ...overrides,
  };
  return Object.freeze(config);
}
