import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { DEFAULT_API_KEY_GRACE_SECONDS, MAX_API_KEY_GRACE_SECONDS } from "./domain/account/api-keys.js";
import { MIN_SECRET_LENGTH } from "./domain/token/key-sealer.js";

/** The service's settings, read once from the environment and frozen. */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dbPath: string;
  /**
   * The PostgreSQL server to store everything in (AIAGENT_DATABASE_URL, or --db postgres://…); undefined: the SQLite
   * file at dbPath.
   */
  readonly databaseUrl: string | undefined;
  /** How PostgreSQL is reached: a pooler, a direct URL for LISTEN, the pool size (see PostgresOptions). */
  readonly postgres: PostgresOptions;
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
  /**
   * An OpenAI-compatible embeddings endpoint (AIAGENT_EMBEDDINGS_BASE_URL, _API_KEY, _MODEL): knowledge passages get
   * dense vectors and searches merge them with BM25; undefined: BM25 alone.
   */
  readonly embeddings: { readonly baseUrl: string; readonly apiKey: string; readonly model: string } | undefined;
  /**
   * The agent's loop and budget: model calls per reply at most (AIAGENT_AGENT_MAX_STEPS, 5), the time one reply may
   * take with its tool calls (AIAGENT_AGENT_MAX_SECONDS, 60), and the model tokens a chatbot may use per UTC day
   * unless its agent settings say otherwise (AIAGENT_LLM_DAILY_TOKENS, 0: no limit).
   */
  readonly agentLoop: { readonly maxSteps: number; readonly maxReplyMs: number; readonly dailyTokens: number };
  /**
   * How long a write waits for another process's lock before answering `unavailable` (AIAGENT_BUSY_TIMEOUT_MS, default
   * 1000).
   */
  readonly busyTimeoutMs: number;
  /**
   * HTTP server limits (AIAGENT_REQUEST_TIMEOUT_MS, AIAGENT_IDLE_TIMEOUT_MS, AIAGENT_H2_IDLE_TIMEOUT_MS,
   * AIAGENT_MAX_HEADER_BYTES, AIAGENT_MAX_URL_LENGTH).
   */
  readonly http: HttpLimits;
  /** Abuse limits on the token endpoints; undefined when AIAGENT_RATE_LIMIT=off (benchmarks only). */
  readonly rateLimit: RateLimits | undefined;
  /** Limits on each customer's writes in the frame; undefined when AIAGENT_RATE_LIMIT=off (benchmarks only). */
  readonly customerLimits: CustomerLimitSettings | undefined;
  /**
   * How often a running instance looks for signing keys rotated elsewhere (AIAGENT_SIGNING_KEY_REFRESH, default 30).
   */
  readonly signingKeyRefreshSeconds: number;
  /**
   * How long `aiagent api-key rotate` keeps older keys working (AIAGENT_API_KEY_GRACE, default 86400; 0: stop at once).
   */
  readonly apiKeyGraceSeconds: number;
  /**
   * Key-encryption secrets for the signing keys at rest (AIAGENT_SECRETS or AIAGENT_SECRETS_FILE; the first
   * encrypts, all decrypt); undefined: a generated one beside the database, refused in production.
   */
  readonly secrets: readonly string[] | undefined;
  /**
   * Open watch streams (WatchConversation, WatchAccount) allowed on this instance, per account, per client address
   * and per token; and how often an open stream's credential is checked again (milliseconds, at most 1000).
   */
  readonly watchStreams: {
    readonly perInstance: number;
    /** The frames' share of perInstance; the rest is kept for the team's (console) streams. */
    readonly framesPerInstance: number;
    /** The team's streams per account. */
    readonly perAccount: number;
    readonly framesPerAccount: number;
    readonly perAddress: number;
    /** A frame customer's (chatbot, user) streams, whatever tokens they hold. */
    readonly perCustomer: number;
    readonly perToken: number;
    readonly recheckMs: number;
    /** How often every open stream's credential is checked in full, whatever the change log says. */
    readonly recheckAllMs: number;
    /** A streamed answer's bytes a client has not taken before the stream waits for it (JSON routes). */
    readonly bufferBytes: number;
    /** How long a stream waits for a client that takes nothing before it ends it with its resume cursor. */
    readonly stallMs: number;
    /** How often an open stream is sent a heartbeat (an item with no event); 0: never. One timer serves all. */
    readonly heartbeatMs: number;
  };
  /** The event log and webhook deliveries (see docs/webhooks.md). */
  readonly webhooks: WebhookSettings;
  /** How long the audit log keeps events, in days (AIAGENT_AUDIT_RETENTION_DAYS, default 365). */
  readonly auditRetentionDays: number;
  /**
   * How often chatbots' retention periods and the audit log's are applied (AIAGENT_RETENTION_INTERVAL, default 3600 s).
   */
  readonly retentionIntervalSeconds: number;
  /** How often each instance looks for snoozes that ended and first-response SLA clocks that are due (ms). */
  readonly timerCheckMs: number;
  /**
   * The bearer secret `GET /metrics` asks for (AIAGENT_METRICS_TOKEN, at least 16 characters; never echoed);
   * undefined: no /metrics route at all (docs/operations.md).
   */
  readonly metricsToken: string | undefined;
  /** E-mail through an SMTP relay (docs/email.md); undefined when AIAGENT_SMTP_URL is unset: nothing is sent. */
  readonly mail: MailSettings | undefined;
  /** The largest file a message may carry, in bytes (AIAGENT_ATTACHMENT_MAX_BYTES, 10 MiB; docs/attachments.md). */
  readonly attachmentMaxBytes: number;
}

/**
 * | variable | default | what |
 * |---|---|---|
 * | AIAGENT_EVENT_RETENTION_DAYS | 30 | how long the event log keeps events |
 * | AIAGENT_WEBHOOK_RETRY_DELAYS | 5,300,1800,7200,18000,36000,36000 | seconds to wait after each failed attempt (±20 % jitter), then give up |
 * | AIAGENT_WEBHOOK_DISABLE_AFTER | 432000 | seconds an endpoint may fail without a success before it is disabled |
 * | AIAGENT_WEBHOOK_TIMEOUT_MS | 10000 | time one attempt may take |
 * | AIAGENT_WEBHOOK_POLL_MS | 1000 | how often due deliveries are looked for |
 * | AIAGENT_WEBHOOK_SLOTS | 20 | attempts one instance runs at once |
 * | AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT | 5 | of those, attempts to one endpoint (a stuck endpoint holds no more) |
 */
export interface WebhookSettings {
  readonly retentionDays: number;
  readonly retryDelaysMs: readonly number[];
  readonly disableAfterSeconds: number;
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly slots: number;
  readonly slotsPerEndpoint: number;
}

/** Limits of the HTTP server, in milliseconds and bytes. */
export interface HttpLimits {
  /**
   * Time a client has to send one whole request (headers and body), on HTTP/1.1; on HTTP/2 the longest silence of one
   * stream.
   */
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
 * | AIAGENT_RATE_LIMIT_PASSWORD_FAILURES | 10 | wrong passwords for one account e-mail from anywhere, then its password log-in is blocked from places it has not signed in from |
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

/**
 * Limits on what one customer (one `user_id` of an account, whichever chatbot or token) writes from the frame, counted
 * across instances on PostgreSQL. Each is a count; 0 turns that one limit off; beyond it the write answers 429 with
 * Retry-After and stores nothing.
 *
 * | variable | default | what |
 * |---|---|---|
 * | AIAGENT_RATE_LIMIT_CONVERSATIONS_PER_HOUR | 10 | new conversations one customer starts per hour |
 * | AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE | 20 | messages one customer sends per minute (a retry with its Idempotency-Key is not counted) |
 * | AIAGENT_RATE_LIMIT_RATINGS_PER_HOUR | 5 | ratings set or changed per conversation per hour (the same rating again is not counted) |
 */
export interface CustomerLimitSettings {
  readonly conversationsPerHour: number;
  readonly messagesPerMinute: number;
  readonly ratingsPerHour: number;
}

/** A configuration value that cannot be used; start-up stops with this message. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** Set when the value came from a command-line option (named in the message) rather than the environment. */
  constructor(
    message: string,
    readonly flag?: string,
  ) {
    super(message);
  }
}

/** The variables a command-line option may stand for. */
export type FlagVariable = "AIAGENT_PORT" | "AIAGENT_HOST" | "AIAGENT_DB" | "AIAGENT_API_KEY_GRACE";

/**
 * Command-line options standing for environment variables: `{ AIAGENT_PORT: { flag: "--port", value: "abc" } }`.
 * Each is checked by its variable's rule and named as the user typed it; unlike an empty variable, an empty option
 * is an error, not the default.
 */
export type ConfigFlags = Partial<Record<FlagVariable, { flag: string; value: string }>>;

/** Where each setting is read from: its option if given, else its variable. */
class Source {
  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly flags: ConfigFlags,
  ) {}

  /** The raw value (undefined when unset; an empty variable counts as unset) and the name to report it by. */
  get(name: string): { raw: string | undefined; label: string; flag?: string } {
    const f = this.flags[name as FlagVariable];
    if (f) return { raw: f.value, label: f.flag, flag: f.flag };
    const raw = this.env[name];
    return { raw: raw === "" ? undefined : raw, label: name };
  }

  fail(v: { label: string; flag?: string }, rule: string, raw: string | undefined): never {
    throw new ConfigError(`${v.label} ${rule} (got ${JSON.stringify(raw ?? "")})`, v.flag);
  }
}

function seconds(src: Source, name: string, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  const v = src.get(name);
  if (v.raw === undefined) return fallback;
  if (!/^\d{1,15}$/.test(v.raw) || Number(v.raw) < min || Number(v.raw) > max)
    src.fail(v, `must be a whole number of seconds from ${min} to ${max}`, v.raw);
  return Number(v.raw);
}

function count(src: Source, name: string, fallback: number): number {
  const v = src.get(name);
  if (v.raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v.raw)) src.fail(v, "must be a whole number", v.raw);
  return Number(v.raw);
}

function positive(src: Source, name: string, fallback: number): number {
  const n = count(src, name, fallback);
  if (n < 1) src.fail(src.get(name), "must be at least 1", src.get(name).raw);
  return n;
}

function ranged(src: Source, name: string, fallback: number, min: number, max: number): number {
  const n = count(src, name, fallback);
  if (n < min || n > max) src.fail(src.get(name), `must be a whole number from ${min} to ${max}`, src.get(name).raw);
  return n;
}

/**
 * The caps of open watch streams, sized for tens of thousands per instance (docs/configuration.md): the frames'
 * share of the instance defaults to nine tenths, the rest kept for the team's streams.
 */
function watchCaps(src: Source) {
  const perInstance = positive(src, "AIAGENT_WATCH_STREAMS", 40_000);
  const framesPerInstance = ranged(
    src,
    "AIAGENT_WATCH_FRAME_STREAMS",
    Math.max(1, Math.floor(perInstance * 0.9)),
    1,
    perInstance,
  );
  return {
    perInstance,
    framesPerInstance,
    perAccount: positive(src, "AIAGENT_WATCH_STREAMS_PER_ACCOUNT", 500),
    framesPerAccount: positive(src, "AIAGENT_WATCH_FRAME_STREAMS_PER_ACCOUNT", 20_000),
    perAddress: positive(src, "AIAGENT_WATCH_STREAMS_PER_ADDRESS", 200),
    perCustomer: positive(src, "AIAGENT_WATCH_STREAMS_PER_CUSTOMER", 8),
    perToken: positive(src, "AIAGENT_WATCH_STREAMS_PER_TOKEN", 4),
  };
}

/** A watch stream's heartbeat interval: 0 (none) or 100 ms to an hour; 25 s by default, as Centrifugo's pings. */
function heartbeatMs(src: Source): number {
  const ms = count(src, "AIAGENT_STREAM_HEARTBEAT_MS", 25_000);
  const v = src.get("AIAGENT_STREAM_HEARTBEAT_MS");
  if (ms !== 0 && (ms < 100 || ms > 3_600_000)) src.fail(v, "must be 0 (no heartbeats) or from 100 to 3600000", v.raw);
  return ms;
}

function webhookSlots(src: Source): { slots: number; slotsPerEndpoint: number } {
  const slots = positive(src, "AIAGENT_WEBHOOK_SLOTS", 20);
  const slotsPerEndpoint = positive(src, "AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT", Math.min(5, slots));
  const v = src.get("AIAGENT_WEBHOOK_SLOTS_PER_ENDPOINT");
  if (slotsPerEndpoint > slots) src.fail(v, `must be at most AIAGENT_WEBHOOK_SLOTS (${slots})`, v.raw);
  return { slots, slotsPerEndpoint };
}

function rateLimits(src: Source): RateLimits | undefined {
  const mode = oneOf(src, "AIAGENT_RATE_LIMIT", ["on", "off"] as const, "on");
  if (mode === "off") return undefined;
  return {
    perAddress: count(src, "AIAGENT_RATE_LIMIT_PER_ADDRESS", 6000),
    perKey: count(src, "AIAGENT_RATE_LIMIT_PER_KEY", 6000),
    perAccount: count(src, "AIAGENT_RATE_LIMIT_PER_ACCOUNT", 6000),
    failuresPerAddress: count(src, "AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS", 100),
    failuresPerTarget: count(src, "AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET", 20),
    passwordFailures: count(src, "AIAGENT_RATE_LIMIT_PASSWORD_FAILURES", 10),
    blockSeconds: positive(src, "AIAGENT_RATE_LIMIT_BLOCK_SECONDS", 900),
  };
}

function customerLimits(src: Source): CustomerLimitSettings | undefined {
  if (oneOf(src, "AIAGENT_RATE_LIMIT", ["on", "off"] as const, "on") === "off") return undefined;
  return {
    conversationsPerHour: count(src, "AIAGENT_RATE_LIMIT_CONVERSATIONS_PER_HOUR", 10),
    messagesPerMinute: count(src, "AIAGENT_RATE_LIMIT_MESSAGES_PER_MINUTE", 20),
    ratingsPerHour: count(src, "AIAGENT_RATE_LIMIT_RATINGS_PER_HOUR", 5),
  };
}

function embeddingsOf(src: Source, env: NodeJS.ProcessEnv): Config["embeddings"] {
  const v = src.get("AIAGENT_EMBEDDINGS_BASE_URL");
  if (v.raw === undefined) return undefined;
  let u: URL | undefined;
  try {
    u = new URL(v.raw);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password)
    src.fail(v, "must be an http or https URL without a user name or password", v.raw);
  return {
    baseUrl: v.raw.replace(/\/+$/, ""),
    apiKey: env.AIAGENT_EMBEDDINGS_API_KEY ?? "",
    model: env.AIAGENT_EMBEDDINGS_MODEL || "text-embedding-3-small",
  };
}

function oneOf<T extends string>(src: Source, name: string, allowed: readonly T[], fallback: T): T {
  const v = src.get(name);
  if (v.raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(v.raw)) src.fail(v, `must be one of ${allowed.join(", ")}`, v.raw);
  return v.raw as T;
}

function port(src: Source): number {
  const v = src.get("AIAGENT_PORT");
  const raw = v.raw ?? (v.flag ? "" : "8080");
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535)
    src.fail(v, "must be a port number from 0 to 65535 (0: any free port)", raw);
  return Number(raw);
}

// A DNS name: dot-separated labels of letters, digits and inner hyphens.
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

function host(src: Source): string {
  const v = src.get("AIAGENT_HOST");
  if (v.raw === undefined && !v.flag) return "127.0.0.1";
  const raw = v.raw ?? "";
  if (isIP(raw) === 0 && !HOSTNAME.test(raw)) src.fail(v, "must be an IP address or a host name", raw);
  return raw;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

function dbPath(src: Source): string {
  const v = src.get("AIAGENT_DB");
  if (v.raw === undefined && !v.flag) return resolve("./data/aiagent.db");
  // --db postgres://… names the server instead of a file; the file path is then unused.
  if (POSTGRES_URL.test(v.raw ?? "")) return resolve("./data/aiagent.db");
  const raw = v.raw ?? "";
  if (raw === "") src.fail(v, "must be a file path", raw);
  return resolve(raw);
}

function databaseUrl(src: Source): string | undefined {
  const db = src.get("AIAGENT_DB");
  return postgresUrl(db.raw !== undefined && POSTGRES_URL.test(db.raw) ? db : src.get("AIAGENT_DATABASE_URL"));
}

/**
 * How the service connects to PostgreSQL beyond its URL. Behind a pooler in transaction mode (pgbouncer's
 * pool_mode=transaction) a server connection serves another client after each transaction, so the service then
 * prepares no named statements, sends no startup options, and LISTENs on a direct (session) connection.
 *
 * | variable | default | what |
 * |---|---|---|
 * | AIAGENT_DATABASE_POOLER | none | `transaction`: AIAGENT_DATABASE_URL goes through a transaction-pooling pooler |
 * | AIAGENT_DATABASE_LISTEN_URL | AIAGENT_DATABASE_URL | the server itself, for LISTEN (live updates, key rotations) |
 * | AIAGENT_DATABASE_POOL_SIZE | 10 | connections per instance |
 */
export interface PostgresOptions {
  readonly pooler: "none" | "transaction";
  readonly listenUrl: string | undefined;
  readonly poolSize: number;
}

function postgresOptions(src: Source): PostgresOptions {
  return {
    pooler: oneOf(src, "AIAGENT_DATABASE_POOLER", ["none", "transaction"] as const, "none"),
    listenUrl: postgresUrl(src.get("AIAGENT_DATABASE_LISTEN_URL")),
    poolSize: positive(src, "AIAGENT_DATABASE_POOL_SIZE", 10),
  };
}

function postgresUrl(v: ReturnType<Source["get"]>): string | undefined {
  if (v.raw === undefined || v.raw === "") return undefined;
  let url: URL | undefined;
  try {
    url = new URL(v.raw);
  } catch {
    url = undefined;
  }
  // The value is not echoed: it may carry a password.
  if (!url || !POSTGRES_URL.test(v.raw) || url.hostname === "")
    throw new ConfigError(`${v.label} must be a postgres://user@host:port/database URL`, v.flag);
  return v.raw;
}

/** A database URL as it may be logged: without its password. */
export function redactUrl(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

/** AIAGENT_SECRETS (comma-separated) or AIAGENT_SECRETS_FILE (one per line or comma-separated); never echoed. */
function secrets(env: NodeJS.ProcessEnv): string[] | undefined {
  const inline = env.AIAGENT_SECRETS;
  const file = env.AIAGENT_SECRETS_FILE;
  if (inline && file) throw new ConfigError("set AIAGENT_SECRETS or AIAGENT_SECRETS_FILE, not both");
  let raw: string;
  let name: string;
  if (inline) [raw, name] = [inline, "AIAGENT_SECRETS"];
  else if (file) {
    name = "AIAGENT_SECRETS_FILE";
    try {
      raw = readFileSync(file, "utf8");
    } catch (e) {
      throw new ConfigError(`AIAGENT_SECRETS_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? e})`);
    }
  } else return undefined;
  const list = raw
    .split(/[,\n]/)
    .map((x) => x.trim())
    .filter((x) => x !== "");
  if (list.length === 0) throw new ConfigError(`${name} holds no secret`);
  list.forEach((x, i) => {
    if (x.length < MIN_SECRET_LENGTH)
      throw new ConfigError(
        `${name}: secret ${i + 1} has ${x.length} characters; each must have at least ${MIN_SECRET_LENGTH}`,
      );
  });
  return list;
}

/** Default wait after each failed delivery, in seconds: the Standard Webhooks schedule (27 h 40 min in all). */
const DEFAULT_RETRY_DELAYS = "5,300,1800,7200,18000,36000,36000";

/** Default waits after each failed e-mail attempt, in seconds (about 9 hours in all). */
const DEFAULT_MAIL_RETRY_DELAYS = "30,120,600,1800,7200,21600";

function retryDelays(src: Source, name = "AIAGENT_WEBHOOK_RETRY_DELAYS", fallback = DEFAULT_RETRY_DELAYS): number[] {
  const v = src.get(name);
  const raw = v.raw ?? fallback;
  const parts = raw.split(",").map((x) => x.trim());
  if (parts.length > 30 || parts.some((x) => !/^\d{1,6}(\.\d{1,3})?$/.test(x)))
    src.fail(v, "must be up to 30 comma-separated numbers of seconds (e.g. 5,300,1800)", raw);
  return parts.map((x) => Math.round(Number(x) * 1000));
}

/** Shortest AIAGENT_METRICS_TOKEN accepted: a guessable one would publish the service's traffic. */
export const MIN_METRICS_TOKEN_LENGTH = 16;

function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.AIAGENT_METRICS_TOKEN;
  if (raw === undefined || raw === "") return undefined;
  if (raw.length < MIN_METRICS_TOKEN_LENGTH || /\s/.test(raw))
    throw new ConfigError(
      `AIAGENT_METRICS_TOKEN must have at least ${MIN_METRICS_TOKEN_LENGTH} characters and no spaces (got ${raw.length} characters)`,
    );
  return raw;
}

/** The SMTP relay and what the mails say (docs/email.md). */
export interface MailSettings {
  /** smtp:// (STARTTLS when offered) or smtps:// (TLS), with user:password when the relay asks for them. */
  readonly smtpUrl: string;
  /** The sender address (AIAGENT_MAIL_FROM), e.g. "Support <support@example.com>". */
  readonly from: string;
  /** Where the links in the mails point (AIAGENT_MAIL_LINK_BASE, else AIAGENT_BASE_URL): this service's address. */
  readonly linkBase: string;
  /** A customer with no open frame for this long after a reply gets it by e-mail (AIAGENT_MAIL_OFFLINE_SECONDS). */
  readonly offlineMs: number;
  /** How long a mail's link to its conversation works (AIAGENT_MAIL_LINK_TTL, seconds; the link works once). */
  readonly linkTtlMs: number;
  /** Waits after each failed attempt (AIAGENT_MAIL_RETRY_DELAYS); after the last the mail has failed. */
  readonly retryDelaysMs: number[];
  /** Longest one attempt may take, connection included (AIAGENT_MAIL_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /**
   * The relay may be at a loopback or private address (AIAGENT_SMTP_ALLOW_PRIVATE=true, or outside production):
   * the operator's own relay on the same host or network. Otherwise only public addresses are reached.
   */
  readonly allowPrivate: boolean;
  /** Transcripts one conversation may have mailed per hour (AIAGENT_MAIL_TRANSCRIPTS_PER_HOUR; 0: no limit). */
  readonly transcriptsPerHour: number;
}

const MAIL_ADDRESS = /^(?:[^<>\r\n]{0,100}<)?[^\s@<>]{1,64}@[^\s@<>]{1,255}>?$/;

function mailSettings(src: Source, env: NodeJS.ProcessEnv): MailSettings | undefined {
  const url = src.get("AIAGENT_SMTP_URL");
  if (url.raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url.raw);
  } catch {
    parsed = undefined;
  }
  // Never echoed: it may hold the relay's password.
  if (!parsed || !["smtp:", "smtps:"].includes(parsed.protocol) || parsed.hostname === "")
    throw new ConfigError("AIAGENT_SMTP_URL must be an smtp://[user:password@]host[:port] or smtps:// URL");
  const from = src.get("AIAGENT_MAIL_FROM");
  if (from.raw === undefined || !MAIL_ADDRESS.test(from.raw))
    src.fail(
      from,
      "must be the sender's address (e.g. Support <support@example.com>) when AIAGENT_SMTP_URL is set",
      from.raw,
    );
  const base = src.get("AIAGENT_MAIL_LINK_BASE");
  const linkBase = base.raw ?? env.AIAGENT_BASE_URL;
  if (!linkBase || !/^https?:\/\/[^/]/.test(linkBase))
    src.fail(base, "must be this service's public http(s) address (or set AIAGENT_BASE_URL)", linkBase);
  const allow = src.get("AIAGENT_SMTP_ALLOW_PRIVATE");
  if (allow.raw !== undefined && !["true", "false"].includes(allow.raw))
    src.fail(allow, "must be true or false", allow.raw);
  return {
    smtpUrl: url.raw,
    from: from.raw,
    linkBase: linkBase.replace(/\/+$/, ""),
    offlineMs: seconds(src, "AIAGENT_MAIL_OFFLINE_SECONDS", 120, 1, 86_400) * 1000,
    linkTtlMs: seconds(src, "AIAGENT_MAIL_LINK_TTL", 7 * 86_400, 60, 30 * 86_400) * 1000,
    retryDelaysMs: retryDelays(src, "AIAGENT_MAIL_RETRY_DELAYS", DEFAULT_MAIL_RETRY_DELAYS),
    timeoutMs: ranged(src, "AIAGENT_MAIL_TIMEOUT_MS", 30_000, 100, 600_000),
    allowPrivate: allow.raw === "true" || (env.NODE_ENV ?? "") !== "production",
    transcriptsPerHour: count(src, "AIAGENT_MAIL_TRANSCRIPTS_PER_HOUR", 3),
  };
}

/** Reads and validates the configuration once; throws ConfigError naming the bad variable or option. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
  flags: ConfigFlags = {},
): Config {
  const src = new Source(env, flags);
  const llmBase = env.AIAGENT_LLM_BASE_URL;
  const config: Config = {
    port: port(src),
    host: host(src),
    dbPath: dbPath(src),
    databaseUrl: databaseUrl(src),
    postgres: postgresOptions(src),
    baseUrl: env.AIAGENT_BASE_URL || undefined,
    appUrl: env.AIAGENT_APP_URL || undefined,
    accessTokenTtl: seconds(src, "AIAGENT_ACCESS_TOKEN_TTL", 15 * 60),
    refreshTokenTtl: seconds(src, "AIAGENT_REFRESH_TOKEN_TTL", 30 * 24 * 3600),
    idTokenTtl: seconds(src, "AIAGENT_ID_TOKEN_TTL", 60 * 60),
    idleCloseSeconds: seconds(src, "AIAGENT_IDLE_CLOSE", 86400),
    synchronous: oneOf(src, "AIAGENT_SYNCHRONOUS", ["OFF", "NORMAL", "FULL"] as const, "FULL"),
    production: (env.NODE_ENV ?? "") === "production",
    logLevel: oneOf(src, "AIAGENT_LOG_LEVEL", ["debug", "info", "warn", "error", "silent"] as const, "info"),
    llm: llmBase
      ? {
          baseUrl: llmBase.replace(/\/+$/, ""),
          apiKey: env.AIAGENT_LLM_API_KEY ?? "",
          model: env.AIAGENT_LLM_MODEL ?? "gpt-4o-mini",
        }
      : undefined,
    embeddings: embeddingsOf(src, env),
    agentLoop: {
      maxSteps: seconds(src, "AIAGENT_AGENT_MAX_STEPS", 5, 1, 20),
      maxReplyMs: seconds(src, "AIAGENT_AGENT_MAX_SECONDS", 60, 1, 600) * 1000,
      dailyTokens: count(src, "AIAGENT_LLM_DAILY_TOKENS", 0),
    },
    busyTimeoutMs: count(src, "AIAGENT_BUSY_TIMEOUT_MS", 1000),
    http: {
      requestTimeoutMs: positive(src, "AIAGENT_REQUEST_TIMEOUT_MS", 30_000),
      idleTimeoutMs: positive(src, "AIAGENT_IDLE_TIMEOUT_MS", 5_000),
      h2IdleTimeoutMs: positive(src, "AIAGENT_H2_IDLE_TIMEOUT_MS", 60_000),
      maxHeaderBytes: positive(src, "AIAGENT_MAX_HEADER_BYTES", 16 * 1024),
      maxUrlLength: positive(src, "AIAGENT_MAX_URL_LENGTH", 8 * 1024),
    },
    rateLimit: rateLimits(src),
    customerLimits: customerLimits(src),
    signingKeyRefreshSeconds: seconds(src, "AIAGENT_SIGNING_KEY_REFRESH", 30, 1, 3600),
    apiKeyGraceSeconds: seconds(
      src,
      "AIAGENT_API_KEY_GRACE",
      DEFAULT_API_KEY_GRACE_SECONDS,
      0,
      MAX_API_KEY_GRACE_SECONDS,
    ),
    secrets: secrets(env),
    watchStreams: {
      ...watchCaps(src),
      recheckMs: ranged(src, "AIAGENT_STREAM_RECHECK_MS", 500, 50, 60_000),
      recheckAllMs: ranged(src, "AIAGENT_STREAM_RECHECK_ALL_MS", 300_000, 1000, 86_400_000),
      bufferBytes: ranged(src, "AIAGENT_STREAM_BUFFER_BYTES", 256 * 1024, 16 * 1024, 64 * 1024 * 1024),
      stallMs: ranged(src, "AIAGENT_STREAM_STALL_MS", 10_000, 100, 600_000),
      heartbeatMs: heartbeatMs(src),
    },
    webhooks: {
      retentionDays: positive(src, "AIAGENT_EVENT_RETENTION_DAYS", 30),
      retryDelaysMs: retryDelays(src),
      disableAfterSeconds: seconds(src, "AIAGENT_WEBHOOK_DISABLE_AFTER", 5 * 86400),
      timeoutMs: positive(src, "AIAGENT_WEBHOOK_TIMEOUT_MS", 10_000),
      pollMs: positive(src, "AIAGENT_WEBHOOK_POLL_MS", 1000),
      ...webhookSlots(src),
    },
    auditRetentionDays: positive(src, "AIAGENT_AUDIT_RETENTION_DAYS", 365),
    retentionIntervalSeconds: seconds(src, "AIAGENT_RETENTION_INTERVAL", 3600, 1, 86400),
    timerCheckMs: ranged(src, "AIAGENT_TIMER_CHECK_MS", 5000, 50, 3_600_000),
    metricsToken: metricsToken(env),
    mail: mailSettings(src, env),
    attachmentMaxBytes: ranged(src, "AIAGENT_ATTACHMENT_MAX_BYTES", 10 * 1024 * 1024, 1024, 50 * 1024 * 1024),
    ...overrides,
  };
  return Object.freeze(config);
}
