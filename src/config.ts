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
  /** How long a write waits for another process's lock before answering `unavailable` (AIAGENT_BUSY_TIMEOUT_MS, default 1000). */
  readonly busyTimeoutMs: number;
  /** HTTP server limits (AIAGENT_REQUEST_TIMEOUT_MS, AIAGENT_IDLE_TIMEOUT_MS, AIAGENT_H2_IDLE_TIMEOUT_MS, AIAGENT_MAX_HEADER_BYTES, AIAGENT_MAX_URL_LENGTH). */
  readonly http: HttpLimits;
  /** Abuse limits on the token endpoints; undefined when AIAGENT_RATE_LIMIT=off (benchmarks only). */
  readonly rateLimit: RateLimits | undefined;
  /** Open watch streams (WatchConversation) allowed on this instance, and per token. */
  readonly watchStreams: { readonly perInstance: number; readonly perToken: number };
}

/** Limits of the HTTP server, in milliseconds and bytes. */
export interface HttpLimits {
  /** Time a client has to send one whole request (headers and body), on HTTP/1.1; on HTTP/2 the longest silence of one stream. */
  readonly requestTimeoutMs: number;
  /** An idle HTTP/1.1 keep-alive connection is closed after this. */
  readonly idleTimeoutMs: number;
  /** An HTTP/2 connection with no traffic at all is closed after this. */
  readonly h2IdleTimeoutMs: number;
  readonly maxHeaderBytes: number;
  readonly maxUrlLength: number;
}

/**
 * Abuse limits of get_access_token, refresh_token and get_id_token. Each is a count; 0 turns that one limit off.
 * Request limits count per minute; failure limits count failed credentials per `blockSeconds` and, once exceeded,
 * refuse for `blockSeconds`.
 *
 * | variable | default | what |
 * |---|---|---|
 * | AIAGENT_RATE_LIMIT | on | `off` turns every limit below off (load tests only) |
 * | AIAGENT_RATE_LIMIT_PER_ADDRESS | 6000 | token requests per minute from one client address (IPv6: per /64) |
 * | AIAGENT_RATE_LIMIT_PER_KEY | 6000 | token requests per minute carrying one client_api_key |
 * | AIAGENT_RATE_LIMIT_PER_ACCOUNT | 6000 | tokens issued per minute for one account |
 * | AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS | 100 | failed credentials from one address, then that address is blocked |
 * | AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET | 20 | failed credentials from one address against one chatbot or account e-mail, then that pair is blocked |
 * | AIAGENT_RATE_LIMIT_PASSWORD_FAILURES | 10 | wrong passwords for one account e-mail from anywhere, then its password log-in is blocked |
 * | AIAGENT_RATE_LIMIT_BLOCK_SECONDS | 900 | failure window and block length |
 */
export interface RateLimits {
  readonly perAddress: number;
  readonly perKey: number;
  readonly perAccount: number;
  readonly failuresPerAddress: number;
  readonly failuresPerTarget: number;
  readonly passwordFailures: number;
  readonly blockSeconds: number;
}

/** A configuration value that cannot be used; start-up stops with this message. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function seconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new ConfigError(`${name} must be a whole number of seconds, at least 1 (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

function count(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw new ConfigError(`${name} must be a whole number (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const n = count(env, name, fallback);
  if (n < 1) throw new ConfigError(`${name} must be at least 1 (got ${JSON.stringify(env[name])})`);
  return n;
}

function rateLimits(env: NodeJS.ProcessEnv): RateLimits | undefined {
  const mode = oneOf(env, "AIAGENT_RATE_LIMIT", ["on", "off"] as const, "on");
  if (mode === "off") return undefined;
  return {
    perAddress: count(env, "AIAGENT_RATE_LIMIT_PER_ADDRESS", 6000),
    perKey: count(env, "AIAGENT_RATE_LIMIT_PER_KEY", 6000),
    perAccount: count(env, "AIAGENT_RATE_LIMIT_PER_ACCOUNT", 6000),
    failuresPerAddress: count(env, "AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS", 100),
    failuresPerTarget: count(env, "AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET", 20),
    passwordFailures: count(env, "AIAGENT_RATE_LIMIT_PASSWORD_FAILURES", 10),
    blockSeconds: positive(env, "AIAGENT_RATE_LIMIT_BLOCK_SECONDS", 900),
  };
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = raw;
  if (!(allowed as readonly string[]).includes(v))
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")} (got ${JSON.stringify(raw)})`);
  return v as T;
}

/** Reads and validates the configuration; throws ConfigError naming the bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const portRaw = env.AIAGENT_PORT ?? "8080";
  if (!/^\d+$/.test(portRaw) || Number(portRaw) > 65535)
    throw new ConfigError(`AIAGENT_PORT must be a port number (got ${JSON.stringify(portRaw)})`);
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
      ? {
          baseUrl: llmBase.replace(/\/+$/, ""),
          apiKey: env.AIAGENT_LLM_API_KEY ?? "",
          model: env.AIAGENT_LLM_MODEL ?? "gpt-4o-mini",
        }
      : undefined,
    busyTimeoutMs: count(env, "AIAGENT_BUSY_TIMEOUT_MS", 1000),
    http: {
      requestTimeoutMs: positive(env, "AIAGENT_REQUEST_TIMEOUT_MS", 30_000),
      idleTimeoutMs: positive(env, "AIAGENT_IDLE_TIMEOUT_MS", 5_000),
      h2IdleTimeoutMs: positive(env, "AIAGENT_H2_IDLE_TIMEOUT_MS", 60_000),
      maxHeaderBytes: positive(env, "AIAGENT_MAX_HEADER_BYTES", 16 * 1024),
      maxUrlLength: positive(env, "AIAGENT_MAX_URL_LENGTH", 8 * 1024),
    },
    rateLimit: rateLimits(env),
    watchStreams: {
      perInstance: positive(env, "AIAGENT_WATCH_STREAMS", 1000),
      perToken: positive(env, "AIAGENT_WATCH_STREAMS_PER_TOKEN", 4),
    },
    ...overrides,
  };
  return Object.freeze(config);
}
