import { randomUUID } from "node:crypto";
import pg from "pg";
import type { BulkLoader } from "../../domain/bulk.js";
import type { LogAdvanced, Repositories, Store, StoreStats, UnitOptions } from "../../domain/store.js";
import { DURABLE, StoreOpenError } from "../../domain/store.js";
import type { SessionIssue, SessionIssued } from "../../domain/token/repository.js";
import type { TypingChannel } from "../../domain/typing/channel.js";
import { LogAdvances } from "../log-advances.js";
import { RepositoryMembers } from "../repository-members.js";
import { pgAccounts } from "./accounts.js";
import { pgActivities } from "./activities.js";
import { pgAgents } from "./agents.js";
import { pgApiKeys } from "./api-keys.js";
import { pgApprovals } from "./approvals.js";
import { pgAttachments } from "./attachments.js";
import { pgAudit } from "./audit.js";
import { pgChatbots } from "./chatbots.js";
import { pgContacts, pgConversations } from "./conversations.js";
import { listenForCredentials, pgCredentialChanges } from "./credential-changes.js";
import { checkout, markUnprepared, PgRunner } from "./db.js";
import { pgDemoSetup } from "./demo-setup.js";
import { pgDrafts } from "./drafts.js";
import { withAdvisoryLock } from "./exclusive.js";
import { pgIdempotency } from "./idempotency.js";
import { pgInvitations } from "./invitations.js";
import { pgKnowledge } from "./knowledge.js";
import { pgLabels } from "./labels.js";
import { PgListener } from "./listen.js";
import { listenForLogs } from "./log-channel.js";
import { pgMail } from "./mail.js";
import { pgMembers } from "./members.js";
import { pgMigrations } from "./migrations.js";
import { pgMentionAlerts, pgMentions, pgNotes, pgSavedReplies } from "./notes.js";
import { pgPictures } from "./pictures.js";
import { types } from "./pipeline.js";
import { ERASURES_CHANNEL, pgPrivacy } from "./privacy.js";
import { pgProfiles } from "./profiles.js";
import { pgRatings } from "./ratings.js";
import { pgReplies } from "./replies.js";
import { pgReports } from "./reports.js";
import { pgPresence, pgRouting } from "./routing.js";
import { pgSearch } from "./search.js";
import { Sequencer } from "./sequencer.js";
import { pgIssueSession, pgLaunchCodes, pgRefreshTokens } from "./sessions.js";
import { pgSigningKeys, SIGNING_KEYS_CHANNEL } from "./signing-keys.js";
import { pgTeams } from "./teams.js";
import { pgTimers } from "./timers.js";
import { PgTyping } from "./typing.js";
import { pgEvents, pgWebhooks } from "./webhooks.js";

/** How the PostgreSQL back end connects. */
export interface PgStoreOptions {
  /** Connections per instance (default 10). */
  poolSize?: number;
  /** A statement waiting longer than this for a lock fails as busy (default 5000 ms, like SQLite's busy timeout). */
  lockTimeoutMs?: number;
  /**
   * "transaction": `url` goes through a transaction-pooling pooler (PgBouncer pool_mode=transaction): no named
   * statements, no startup options (the lock timeout is set per unit of work with SET LOCAL), and LISTEN on listenUrl.
   */
  pooler?: "none" | "transaction";
  /** Where LISTEN connects (a session of its own, so not through a transaction pooler); default `url`. */
  listenUrl?: string;
}

/** How often queued events left without places (their writer died after its commit) are looked for. */
const SWEEP_MS = 1000;

/** Every instance migrating at once waits here: one applies each step, the others then find it applied. */
const MIGRATION_LOCK = 0x616961676e74; // "aiagnt"

/** The storage port on PostgreSQL: a pool, named (prepared) statements, units of work on one pooled connection. */
export class PgStore extends RepositoryMembers implements Store {
  private readonly db: PgRunner;
  /** This process, in its announcements of appends (it hears its own through `advances`, right after the commit). */
  private readonly origin: string;
  private readonly advances: LogAdvances;
  private readonly sequencer: Sequencer;

  constructor(
    readonly pool: pg.Pool,
    private readonly listenUrl: string,
    db: PgRunner = new PgRunner(pool),
  ) {
    const origin = randomUUID();
    // Appends take their places after their unit's commit; the placing announces them (here and to the others).
    const sequencer: Sequencer = new Sequencer(pool, origin, (changes, deliveries, placed) =>
      advances.tell(changes, deliveries, placed),
    );
    const advances = new LogAdvances((accountIds) => sequencer.place(accountIds));
    db.placeAtCommit(sequencer, (accountIds) => advances.placed(accountIds));
    const accounts = pgAccounts(db);
    const apiKeys = pgApiKeys(db);
    super({
      accounts,
      apiKeys,
      chatbots: pgChatbots(db),
      refreshTokens: pgRefreshTokens(db, { accounts, apiKeys }),
      launchCodes: pgLaunchCodes(db),
      signingKeys: pgSigningKeys(db),
      contacts: pgContacts(db),
      conversations: pgConversations(db),
      demoSetup: pgDemoSetup(db),
      members: pgMembers(db),
      invitations: pgInvitations(db),
      profiles: pgProfiles(db),
      ratings: pgRatings(db),
      replies: pgReplies(db),
      reports: pgReports(db),
      pictures: pgPictures(db),
      attachments: pgAttachments(db),
      notes: pgNotes(db),
      mentions: pgMentions(db),
      mentionAlerts: pgMentionAlerts(db),
      activities: pgActivities(db),
      savedReplies: pgSavedReplies(db),
      teams: pgTeams(db),
      routing: pgRouting(db),
      presence: pgPresence(db),
      events: advances.announcing(pgEvents(db, (accountIds) => sequencer.place(accountIds))),
      webhooks: pgWebhooks(db),
      idempotency: pgIdempotency(db),
      audit: pgAudit(db),
      privacy: pgPrivacy(db),
      credentialChanges: pgCredentialChanges(db),
      knowledge: pgKnowledge(db),
      agents: pgAgents(db),
      approvals: pgApprovals(db),
      drafts: pgDrafts(db),
      mail: pgMail(db),
      search: pgSearch(db),
      labels: pgLabels(db),
      timers: pgTimers(db),
    });
    this.db = db;
    this.origin = origin;
    this.advances = advances;
    this.sequencer = sequencer;
  }

  transaction<T>(fn: (tx: Repositories) => Promise<T>, o?: UnitOptions): Promise<T> {
    // The repositories follow the unit of work of their async context, so `this` is the transaction's view too.
    if (o?.rowLocks) return this.advances.around(() => this.db.unit(() => fn(this)));
    return this.advances.around(() => this.db.serializable(() => fn(this)));
  }

  /** One statement, one round trip (sessions.ts); in an open unit of work, one statement of it. */
  issueSession(s: SessionIssue): Promise<SessionIssued> {
    return pgIssueSession(this.db, s);
  }

  /** A commit is durable when PostgreSQL acknowledges it (synchronous_commit on). */
  durable(): Promise<void> {
    return DURABLE;
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

  async stats(): Promise<StoreStats> {
    const { rows } = await this.pool.query<{ n: string; oldest: string | null }>(
      "SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'",
    );
    return {
      poolInUse: this.pool.totalCount - this.pool.idleCount,
      poolWaiting: this.pool.waitingCount,
      unitRetries: this.db.retries,
      outboxPending: Number(rows[0]?.n ?? 0),
      outboxOldestAt: rows[0]?.oldest == null ? null : Number(rows[0].oldest),
    };
  }

  async onSigningKeysChanged(changed: () => void): Promise<() => void> {
    const listener = new PgListener(this.listenUrl, SIGNING_KEYS_CHANNEL, () => changed());
    await listener.start();
    return () => listener.close();
  }

  onCredentialsChanged(changed: () => void): Promise<() => void> {
    return listenForCredentials(this.listenUrl, changed);
  }

  /** Synthetic data is bulk-loaded into SQLite only (`aiagent seed`); the benchmark copies a seeded file into PostgreSQL. */
  async bulkLoader(): Promise<BulkLoader> {
    throw new Error("the PostgreSQL back end has no bulk loader: seed a SQLite database instead");
  }

  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
    return withAdvisoryLock(this.pool, name, fn);
  }

  async onConversationsErased(erased: (conversationIds: string[] | undefined) => void): Promise<() => void> {
    const listener = new PgListener(this.listenUrl, ERASURES_CHANNEL, (p) => erased(p ? p.split(",") : undefined));
    await listener.start();
    return () => listener.close();
  }

  /**
   * This process's appends once placed; the other instances' over LISTEN/NOTIFY. While anyone listens, the events a
   * dead process committed but left without places are placed within SWEEP_MS (docs/live-updates.md).
   */
  async onLogAdvanced(advanced: LogAdvanced): Promise<() => void> {
    const stopLocal = this.advances.listen(advanced);
    try {
      const stopShared = await listenForLogs(this.listenUrl, this.origin, advanced);
      const sweeping = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_MS);
      sweeping.unref();
      return () => {
        clearInterval(sweeping);
        stopLocal();
        stopShared();
      };
    } catch (e) {
      stopLocal();
      throw e;
    }
  }

  /** Places the events a dead process committed without places; answers how many accounts had some. */
  sweep(): Promise<number> {
    return this.sequencer.sweep();
  }

  async sharedTyping(local: TypingChannel & { close(): void }): Promise<PgTyping> {
    const typing = new PgTyping(this.listenUrl, this.pool, local);
    await typing.start();
    return typing;
  }
}

/** Connects to the server at `url` and brings its schema up to date. */
export async function openPgStore(url: string, o: PgStoreOptions = {}): Promise<PgStore> {
  const lockTimeoutMs = o.lockTimeoutMs ?? 5000;
  const pooled = o.pooler === "transaction";
  const pool = new pg.Pool({
    connectionString: url,
    max: o.poolSize ?? 10,
    types,
    // A transaction pooler refuses startup options (and a session setting would leak to its other clients).
    ...(pooled ? {} : { options: `-c lock_timeout=${lockTimeoutMs}` }),
    connectionTimeoutMillis: 5000,
  });
  // An idle connection the server dropped (restart, pg_terminate_backend) is discarded, not fatal to the process.
  pool.on("error", () => undefined);
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw new StoreOpenError(`cannot open database ${redact(url)}: ${(e as Error).message}`, { cause: e });
  }
  if (pooled) markUnprepared(pool);
  const db = pooled
    ? new PgRunner(pool, false, `BEGIN; SET LOCAL lock_timeout = ${Math.trunc(lockTimeoutMs)}`)
    : new PgRunner(pool);
  return new PgStore(pool, o.listenUrl ?? url, db);
}

/**
 * Applies every migration step newer than the database's, each in one transaction that first takes a
 * transaction-scoped advisory lock: every instance migrating at once waits there, and the next finds the step
 * applied. Transaction-scoped, not session-scoped, so it holds behind a transaction pooler too.
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const held = await checkout(pool);
  const { client } = held;
  const latest = pgMigrations[pgMigrations.length - 1]?.version ?? 0;
  try {
    // The connection's lock timeout bounds waits for rows and tables (a step's DDL behind live traffic). Waiting for
    // another instance's step is not such a wait: it ends when that step commits, however long a loaded server takes
    // (three instances starting at once on an empty database failed with "lock timeout" at load 30). So the
    // advisory lock is waited for without one, and the step runs with the connection's own again.
    const own = (await client.query("SELECT current_setting('lock_timeout') AS t")).rows[0].t as string;
    for (let step = 0; ; step++) {
      await client.query("BEGIN");
      try {
        await client.query("SET LOCAL lock_timeout = 0");
        await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
        await client.query("SELECT set_config('lock_timeout', $1, true)", [own]);
        if (step === 0)
          await client.query(
            "CREATE TABLE IF NOT EXISTS aiagent_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
          );
        const current = Number(
          (await client.query("SELECT coalesce(max(version), 0) AS v FROM aiagent_schema")).rows[0].v,
        );
        if (current > latest)
          throw new Error(`database schema version ${current} is newer than this build knows (${latest})`);
        const next = pgMigrations.find((m) => m.version > current);
        if (next) {
          await client.query(next.sql);
          await client.query("INSERT INTO aiagent_schema (version) VALUES ($1)", [next.version]);
        }
        await client.query("COMMIT");
        if (!next) return;
      } catch (e) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw e;
      }
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
