import pg from "pg";
import type { ConversationEvents } from "../../domain/conversation/events.js";
import type { Repositories, Store, UnitOptions } from "../../domain/store.js";
import { StoreOpenError } from "../../domain/store.js";
import { pgContacts, pgConversations } from "./conversations.js";
import { checkout, PgRunner } from "./db.js";
import { PgConversationEvents } from "./events.js";
import { PgListener } from "./listen.js";
import { pgMembers } from "./members.js";
import { pgMigrations } from "./migrations.js";
import { pgProfiles } from "./profiles.js";
import { pgAccounts, pgApiKeys, pgChatbots, pgDemoSetup, pgSigningKeys, SIGNING_KEYS_CHANNEL } from "./repos.js";
import { pgLaunchCodes, pgRefreshTokens } from "./sessions.js";
import { pgEvents, pgWebhooks } from "./webhooks.js";

/** How the PostgreSQL back end connects. */
export interface PgStoreOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** A statement waiting longer than this for a lock fails as busy (default 5000 ms, like SQLite's busy timeout). */
  lockTimeoutMs?: number;
}

// bigint columns hold epoch milliseconds and counters: well inside a double's exact range.
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

/** Every instance migrating at once waits here: one applies each step, the others then find it applied. */
const MIGRATION_LOCK = 0x616961676e74; // "aiagnt"

/** The storage port on PostgreSQL: a pool, named (prepared) statements, units of work on one pooled connection. */
export class PgStore implements Store {
  readonly accounts: Repositories["accounts"];
  readonly apiKeys: Repositories["apiKeys"];
  readonly chatbots: Repositories["chatbots"];
  readonly refreshTokens: Repositories["refreshTokens"];
  readonly launchCodes: Repositories["launchCodes"];
  readonly signingKeys: Repositories["signingKeys"];
  readonly contacts: Repositories["contacts"];
  readonly conversations: Repositories["conversations"];
  readonly demoSetup: Repositories["demoSetup"];
  readonly members: Repositories["members"];
  readonly profiles: Repositories["profiles"];
  readonly events: Repositories["events"];
  readonly webhooks: Repositories["webhooks"];
  private readonly db: PgRunner;

  constructor(
    readonly pool: pg.Pool,
    private readonly url: string,
  ) {
    this.db = new PgRunner(pool);
    this.accounts = pgAccounts(this.db);
    this.apiKeys = pgApiKeys(this.db);
    this.chatbots = pgChatbots(this.db);
    this.refreshTokens = pgRefreshTokens(this.db);
    this.launchCodes = pgLaunchCodes(this.db);
    this.signingKeys = pgSigningKeys(this.db);
    this.contacts = pgContacts(this.db);
    this.conversations = pgConversations(this.db);
    this.demoSetup = pgDemoSetup(this.db);
    this.members = pgMembers(this.db);
    this.profiles = pgProfiles(this.db);
    this.events = pgEvents(this.db);
    this.webhooks = pgWebhooks(this.db);
  }

  transaction<T>(fn: (tx: Repositories) => Promise<T>, o?: UnitOptions): Promise<T> {
    // The repositories follow the unit of work of their async context, so `this` is the transaction's view too.
    if (o?.rowLocks) return this.db.unit(() => fn(this));
    return this.db.serializable(() => fn(this));
  }

  /** A commit is durable when PostgreSQL acknowledges it (synchronous_commit on). */
  durable(): Promise<void> {
    return Promise.resolve();
  }

  async ready(): Promise<boolean> {
    try {
      return (await this.pool.query("SELECT 1 AS ok")).rows[0]?.ok === 1;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  async onSigningKeysChanged(changed: () => void): Promise<() => void> {
    const listener = new PgListener(this.url, SIGNING_KEYS_CHANNEL, () => changed());
    await listener.start();
    return () => listener.close();
  }

  async sharedEvents(local: ConversationEvents & { close(): void }): Promise<PgConversationEvents> {
    const events = new PgConversationEvents(this.url, this.pool, local, this.conversations);
    await events.start();
    return events;
  }
}

/** Connects to the server at `url` and brings its schema up to date. */
export async function openPgStore(url: string, o: PgStoreOptions = {}): Promise<PgStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: o.poolSize ?? 10,
    types,
    options: `-c lock_timeout=${o.lockTimeoutMs ?? 5000}`,
    connectionTimeoutMillis: 5000,
  });
  // An idle connection the server dropped (restart, pg_terminate_backend) is discarded, not fatal to the process.
  pool.on("error", () => undefined);
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw new StoreOpenError(`cannot open database ${redact(url)}: ${(e as Error).message}`);
  }
  return new PgStore(pool, url);
}

/** Applies every migration step newer than the database's, under an advisory lock, each in one transaction. */
export async function migrate(pool: pg.Pool): Promise<void> {
  const held = await checkout(pool);
  const { client } = held;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS aiagent_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const current = Number(
        (await client.query("SELECT coalesce(max(version), 0) AS v FROM aiagent_schema")).rows[0].v,
      );
      const latest = pgMigrations[pgMigrations.length - 1]?.version ?? 0;
      if (current > latest)
        throw new Error(`database schema version ${current} is newer than this build knows (${latest})`);
      for (const m of pgMigrations) {
        if (m.version <= current) continue;
        await client.query("BEGIN");
        try {
          await client.query(m.sql);
          await client.query("INSERT INTO aiagent_schema (version) VALUES ($1)", [m.version]);
          await client.query("COMMIT");
        } catch (e) {
          await client.query("ROLLBACK");
          throw e;
        }
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
    }
  } finally {
    held.release();
  }
}

/** A connection URL without its password, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "the configured database";
  }
}
