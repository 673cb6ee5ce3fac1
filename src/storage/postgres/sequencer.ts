import type { Pool, QueryResult } from "pg";
import type { LogAdvanced } from "../../domain/store.js";
import { distinct } from "../log-advances.js";
import { type CommitPlacer, checkout, RETRY_BUDGET_MS, statementFor } from "./db.js";
import { storageError } from "./errors.js";
import { LOG_CHANNEL, MAX_IDS, MAX_PAYLOAD, placedEntries } from "./log-channel.js";
import { pipeline, type Statement } from "./pipeline.js";

/** What a placing answers (PLACE). */
interface Placed {
  last_seq: string | number;
  keys: string[];
  ids: string[];
  kinds: string[];
  datas: string[];
  times: (string | number)[];
  deliveries: boolean;
}

/** The advisory lock space of the sequencers (two-key form: apart from the one-key locks of exclusive.ts). */
const LOCK_SPACE = 0x6c6f67; // "log"

/**
 * Takes every queued event of the account (migration 37), in queue order, to the next dense places of its log, with
 * its deliveries (those of an endpoint deleted meanwhile are dropped, as a delete drops the existing ones), bumps the
 * counter, and announces the places to the other instances (heard only if this commits). Run after the advisory
 * lock of the account, as a statement of its own: its snapshot then holds every earlier sequencer's commit.
 * Answers nothing when nothing was queued; else the last place, the entries' order keys, ids, types, data and times
 * in place order (this process's readers take them without reading them back: PlacedEntries) and whether any
 * delivery was recorded. The announcement carries the entries too when it fits NOTIFY's payload (MAX_PAYLOAD bytes),
 * so the other instances' readers need not read them back either; else it names the conversations as before.
 */
const PLACE = `WITH q AS (
    DELETE FROM event_queue WHERE account_id = $1 RETURNING *
  ), n AS (
    SELECT q.*, row_number() OVER (ORDER BY q.id) AS nth, count(*) OVER () AS total FROM q
  ), c AS (
    INSERT INTO event_counters (account_id, last_seq) SELECT $1, count(*) FROM q HAVING count(*) > 0
    ON CONFLICT (account_id) DO UPDATE SET last_seq = event_counters.last_seq + excluded.last_seq RETURNING last_seq
  ), e AS (
    INSERT INTO events (account_id, seq, event_id, type, order_key, data, created_at)
    SELECT $1, c.last_seq - n.total + n.nth, n.event_id, n.type, n.order_key, n.data, n.created_at FROM c, n
  ), d AS (
    INSERT INTO webhook_deliveries (delivery_id, endpoint_id, account_id, event_seq, order_key, status, next_attempt_at, created_at)
    SELECT y.delivery_id, y.endpoint_id, $1, c.last_seq - n.total + n.nth, n.order_key, 'pending', n.created_at, n.created_at
    FROM c, n CROSS JOIN LATERAL unnest(n.delivery_ids, n.endpoint_ids) AS y(delivery_id, endpoint_id)
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.endpoint_id = y.endpoint_id)
    RETURNING 1
  ), k AS (
    SELECT array_agg(order_key ORDER BY nth) AS keys, array_agg(DISTINCT order_key) AS distinct_keys,
      array_agg(event_id ORDER BY nth) AS ids, array_agg(type ORDER BY nth) AS kinds,
      array_agg(data ORDER BY nth) AS datas, array_agg(created_at ORDER BY nth) AS times FROM n
  ), dn AS (SELECT count(*) AS n FROM d
  ), w AS (
    SELECT json_build_object('from', $3::text, 'a', $1::text,
      'c', CASE WHEN cardinality(k.distinct_keys) <= $4 THEN k.distinct_keys END,
      'd', CASE WHEN dn.n > 0 THEN 1 ELSE 0 END) AS hint,
    json_build_object('from', $3::text, 'a', $1::text, 'c', k.distinct_keys, 'd', CASE WHEN dn.n > 0 THEN 1 ELSE 0 END,
      'p', json_build_object('s', c.last_seq - cardinality(k.keys) + 1, 'k', k.keys, 'i', k.ids, 't', k.kinds,
        'x', k.datas, 'm', k.times))::text AS full
    FROM c, k, dn
  )
  SELECT c.last_seq, k.keys, k.ids, k.kinds, k.datas, k.times, dn.n > 0 AS deliveries,
    pg_notify($2, CASE WHEN octet_length(w.full) <= $5 THEN w.full ELSE w.hint::text END)
  FROM c, k, dn, w`;

/**
 * Hands out the places of the event log on PostgreSQL (docs/live-updates.md, "Log positions"). Writers queue their
 * events in their unit of work and commit holding no shared lock (so their commits share fsyncs); after the commit
 * `place` runs one short transaction per account that places everything queued so far. A process runs one at a
 * time per account and lets callers join the next one: under load one run places many writers' events. When none is
 * under way, a unit of work sends that transaction right after its COMMIT, in the same round trip (`atCommit`).
 */
export class Sequencer implements CommitPlacer {
  /** Per account: the run that has not started yet (callers join it), and the one running. */
  private readonly next = new Map<string, Promise<void>>();
  private readonly running = new Map<string, Promise<void>>();

  /**
   * @param told this process's listeners: told of every event a run placed (this process's writers' or another's,
   *   which then hears of them from nobody else).
   */
  constructor(
    private readonly pool: Pool,
    private readonly origin: string,
    private readonly told: LogAdvanced,
  ) {}

  /** Resolves once a run that started after this call placed every event of these accounts committed before it. */
  async place(accountIds: readonly string[]): Promise<void> {
    await Promise.all([...new Set(accountIds)].map((a) => this.placeOne(a)));
  }

  /** Places the queued events of every account (a dead writer's); answers how many accounts had some. */
  async sweep(): Promise<number> {
    const { rows } = await this.pool.query<{ account_id: string }>(
      statementFor(this.pool, {
        name: "event_queue_accounts",
        text: "SELECT DISTINCT account_id FROM event_queue LIMIT 1000",
      }),
    );
    await this.place(rows.map((r) => r.account_id));
    return rows.length;
  }

  private placeOne(accountId: string): Promise<void> {
    const queued = this.next.get(accountId);
    if (queued) return queued;
    const before = this.running.get(accountId);
    const run: Promise<void> = (before ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        this.next.delete(accountId);
        this.running.set(accountId, run);
        try {
          await this.retrying(accountId);
        } finally {
          if (this.running.get(accountId) === run) this.running.delete(accountId);
        }
      });
    this.next.set(accountId, run);
    return run;
  }

  /** One run; a failure (a lost connection, a lock timeout) is tried again for RETRY_BUDGET_MS: the writes stand. */
  private async retrying(accountId: string): Promise<void> {
    const giveUpAt = Date.now() + RETRY_BUDGET_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.run(accountId);
      } catch (e) {
        const backoff = Math.random() * Math.min(100, 2 * 2 ** attempt);
        if (Date.now() + backoff >= giveUpAt) throw storageError(e);
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }

  /**
   * A placing sent by a unit of work right after its COMMIT, in the same round trip (PgRunner.commit), when none of
   * the account's is under way or waiting in this process; it counts as the running one until settled, so callers of
   * `place` meanwhile join the next run, as they would behind any other.
   */
  atCommit(accountId: string): ReturnType<CommitPlacer["atCommit"]> {
    if (this.next.has(accountId) || this.running.has(accountId)) return undefined;
    let settled!: () => void;
    const run = new Promise<void>((resolve) => {
      settled = resolve;
    });
    this.running.set(accountId, run);
    return {
      statements: this.statements(accountId),
      settle: (result) => {
        if (this.running.get(accountId) === run) this.running.delete(accountId);
        settled();
        if (result) this.announce(accountId, result);
      },
    };
  }

  /** The lock and the placing in one round trip, one implicit transaction (committed at the pipeline's Sync). */
  private async run(accountId: string): Promise<void> {
    const held = await checkout(this.pool);
    let placed: QueryResult | undefined;
    try {
      [, placed] = await pipeline(held.client, this.statements(accountId));
    } catch (e) {
      held.lost ??= e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      held.release();
    }
    if (placed) this.announce(accountId, placed);
  }

  /**
   * The advisory lock of the account, then the placing as a statement of its own (its snapshot then holds every
   * earlier placing's commit); in a transaction of their own, committed after the placing. The lock's statement also
   * turns bitmap scans off for that transaction, so the placing (planned after it) takes the queue's rows through a
   * plain index scan: that one marks the index entries of rows earlier placings deleted as dead, where a bitmap scan
   * walks every one of them again until the table's next vacuum (under W5, thousands per placing).
   */
  private statements(accountId: string): Statement[] {
    return [
      statementFor(this.pool, {
        name: "events_place_lock",
        text: "SELECT pg_advisory_xact_lock($1, hashtext($2)), set_config('enable_bitmapscan', 'off', true)",
        values: [LOCK_SPACE, accountId],
      }),
      statementFor(this.pool, {
        name: "events_place",
        text: PLACE,
        values: [accountId, LOG_CHANNEL, this.origin, MAX_IDS, MAX_PAYLOAD],
      }),
    ];
  }

  /** Tells this process's listeners what a placing placed, the entries with it (nothing when nothing was queued). */
  private announce(accountId: string, result: QueryResult): void {
    const placed = result.rows[0] as Placed | undefined;
    if (!placed) return;
    const lastSeq = Number(placed.last_seq);
    this.told(
      distinct(placed.keys.map((conversationId) => ({ accountId, conversationId }))),
      placed.deliveries,
      placedEntries(accountId, lastSeq - placed.keys.length + 1, placed),
    );
  }
}
