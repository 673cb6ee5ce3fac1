import type { EventRepository } from "../../domain/log/repository.js";
import type { ClaimedDelivery, WebhookEndpointRecord, WebhookRepository } from "../../domain/webhook/repository.js";
import { DELIVERY_COLUMNS, toDelivery, toEndpoint, toEvent } from "../webhook-rows.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;
const FROM = "FROM webhook_deliveries d JOIN events e ON e.account_id = d.account_id AND e.seq = d.event_seq";

/**
 * An append of one account's events: queued with their deliveries, in the writer's unit of work, holding no shared
 * lock (so writers of one account commit side by side, sharing fsyncs); their places are given after the commit
 * (sequencer.ts). Arrays carry the rows; `nth` is an event's place in the append, and the queue's id keeps the
 * order of the appends of one conversation (its writers take the conversation's row lock before they queue).
 */
const QUEUE = `INSERT INTO event_queue (account_id, event_id, type, order_key, data, created_at, delivery_ids, endpoint_ids)
  SELECT $1, x.event_id, x.type, x.order_key, x.data, x.created_at,
    coalesce((SELECT array_agg(y.delivery_id ORDER BY y.i) FROM unnest($7::text[], $8::int[]) WITH ORDINALITY AS y(delivery_id, nth, i) WHERE y.nth = x.nth), '{}'),
    coalesce((SELECT array_agg(y.endpoint_id ORDER BY y.i) FROM unnest($9::text[], $8::int[]) WITH ORDINALITY AS y(endpoint_id, nth, i) WHERE y.nth = x.nth), '{}')
  FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[]) WITH ORDINALITY AS x(event_id, type, order_key, data, created_at, nth)
  ORDER BY x.nth`;

/**
 * The event log; `place` gives the queued events of these accounts their places (Sequencer.place), for an append
 * outside a unit of work, which answers them.
 */
export function pgEvents(db: PgDb, place: (accountIds: string[]) => Promise<void>): EventRepository {
  /** The append's values: events and deliveries as arrays (one account per append). */
  const values = (items: Parameters<EventRepository["append"]>[0], accountId: string): unknown[] => {
    const ev = {
      id: [] as string[],
      type: [] as string[],
      key: [] as string[],
      data: [] as string[],
      at: [] as number[],
    };
    const dl = { id: [] as string[], endpoint: [] as string[], nth: [] as number[] };
    for (const [i, { event, deliveries }] of items.entries()) {
      if (event.accountId !== accountId) throw new Error("events of one account per append");
      ev.id.push(event.eventId);
      ev.type.push(event.type);
      ev.key.push(event.orderKey);
      ev.data.push(JSON.stringify(event.data));
      ev.at.push(event.createdAt);
      for (const d of deliveries) {
        dl.id.push(d.deliveryId);
        dl.endpoint.push(d.endpointId);
        dl.nth.push(i + 1);
      }
    }
    return [accountId, ev.id, ev.type, ev.key, ev.data, ev.at, dl.id, dl.nth, dl.endpoint];
  };
  return {
    append: async (items) => {
      const first = items[0];
      if (!first) return [];
      // Places are given after a commit: in a unit of work there are none to answer yet.
      if (db.held) throw new Error("append answers places, so it runs outside a unit of work (add runs inside one)");
      const accountId = first.event.accountId;
      await db.write("events_queue", QUEUE, values(items, accountId));
      await place([accountId]);
      const rows = await db.rows<{ event_id: string; seq: number }>(
        "events_placed",
        "SELECT event_id, seq FROM events WHERE event_id = ANY($1)",
        [items.map((i) => i.event.eventId)],
      );
      const seqs = new Map(rows.map((r) => [r.event_id, Number(r.seq)]));
      return items.map(({ event }) => ({ ...event, seq: seqs.get(event.eventId)! }));
    },
    add: async (items) => {
      const first = items[0];
      // With the unit's commit, in the same round trip (and their placing too, where it can: PgDb.queued).
      if (!first) return;
      db.queued(first.event.accountId);
      await db.write("events_queue", QUEUE, values(items, first.event.accountId));
    },
    list: async (accountId, afterSeq, limit, types) =>
      (
        await db.rows(
          types.length === 0 ? "events_list" : "events_list_types",
          `SELECT * FROM events WHERE account_id = $1 AND seq > $2${types.length === 0 ? "" : " AND type = ANY($4)"} ORDER BY seq LIMIT $3`,
          types.length === 0 ? [accountId, afterSeq, limit] : [accountId, afterSeq, limit, types],
        )
      ).map(toEvent),
    lastSeq: async (accountId) => {
      const [r] = await db.rows<{ last_seq: number }>(
        "events_last_seq",
        "SELECT last_seq FROM event_counters WHERE account_id = $1",
        [accountId],
      );
      return r ? Number(r.last_seq) : 0;
    },
    prune: (before, limit) =>
      db.unit(() =>
        db.count(
          "events_prune",
          `DELETE FROM events WHERE (account_id, seq) IN (
             SELECT e.account_id, e.seq FROM events e WHERE e.created_at < $1 AND NOT EXISTS (
               SELECT 1 FROM webhook_deliveries d WHERE d.account_id = e.account_id AND d.event_seq = e.seq AND d.status = 'pending')
             LIMIT $2 FOR UPDATE SKIP LOCKED)`,
          [before, limit],
        ),
      ),
  };
}

/** Where a unit of work keeps the account's endpoints it already read (see PgDb.held). */
export const heldEndpointsKey = (accountId: string) => `endpoints:${accountId}`;

/** Webhook endpoints and deliveries; dispatchers on every instance claim with FOR UPDATE SKIP LOCKED. */
export function pgWebhooks(db: PgDb): WebhookRepository {
  const values = (e: WebhookEndpointRecord) => [
    e.endpointId,
    e.accountId,
    e.url,
    JSON.stringify(e.eventTypes),
    e.description,
    e.secretSealed,
    e.enabled,
    e.disabledReason,
    e.createdAt,
    e.failingSince,
  ];
  // An endpoint written in a unit makes the endpoints its message append read out of date.
  const forget = () => {
    for (const k of db.held?.keys() ?? []) if (k.startsWith("endpoints:")) db.held?.delete(k);
  };
  return {
    insertEndpoint: async (e) => {
      forget();
      await db.count(
        "webhook_insert",
        `INSERT INTO webhook_endpoints (endpoint_id, account_id, url, event_types, description, secret_sealed, enabled,
           disabled_reason, created_at, failing_since) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        values(e),
      );
    },
    updateEndpoint: async (e) => {
      forget();
      await db.count(
        "webhook_update",
        `UPDATE webhook_endpoints SET url = $2, event_types = $3, description = $4, enabled = $5, disabled_reason = $6,
           failing_since = $7, secret_sealed = $8 WHERE endpoint_id = $1`,
        [
          e.endpointId,
          e.url,
          JSON.stringify(e.eventTypes),
          e.description,
          e.enabled,
          e.disabledReason,
          e.failingSince,
          e.secretSealed,
        ],
      );
    },
    deleteEndpoint: async (id) => {
      forget();
      await db.count("webhook_delete", "DELETE FROM webhook_endpoints WHERE endpoint_id = $1", [id]);
    },
    endpoint: async (id) =>
      (await db.rows("webhook_by_id", "SELECT * FROM webhook_endpoints WHERE endpoint_id = $1", [id])).map(
        toEndpoint,
      )[0],
    endpoints: async (accountId) => {
      // Read by this unit's message append (once: a second read goes to the table).
      const held = db.held?.get(heldEndpointsKey(accountId)) as Row[] | undefined;
      db.held?.delete(heldEndpointsKey(accountId));
      const rows =
        held ??
        (await db.rows(
          "webhook_list",
          "SELECT * FROM webhook_endpoints WHERE account_id = $1 ORDER BY created_at, endpoint_id",
          [accountId],
        ));
      return rows.map(toEndpoint);
    },
    deliveries: async (endpointId, limit, status) =>
      (
        await db.rows(
          status === undefined ? "delivery_list" : "delivery_list_status",
          `SELECT ${DELIVERY_COLUMNS} ${FROM} WHERE d.endpoint_id = $1${status === undefined ? "" : " AND d.status = $3"}
           ORDER BY d.event_seq DESC, d.delivery_id LIMIT $2`,
          status === undefined ? [endpointId, limit] : [endpointId, limit, status],
        )
      ).map(toDelivery),
    delivery: async (id) =>
      (await db.rows("delivery_by_id", `SELECT ${DELIVERY_COLUMNS} ${FROM} WHERE d.delivery_id = $1`, [id])).map(
        toDelivery,
      )[0],
    resend: async (id, at) =>
      void (await db.count(
        "delivery_resend",
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $1, lease_until = NULL WHERE delivery_id = $2",
        [at, id],
      )),
    // Of each endpoint's pending deliveries with one order key, only the oldest is due (they arrive in order); a
    // delivery another instance is claiming is skipped, one it has claimed carries its lease. `busy` counts the
    // caller's attempts running per endpoint (from `skip`): an endpoint at its share is passed over before the limit
    // is taken (a stuck endpoint's backlog cannot fill it); of the rows locked, each endpoint gets up to its share
    // (the window is outside the locking query: PostgreSQL allows no FOR UPDATE beside one).
    // One statement takes the leases (atomic on its own, so no unit of work around it: the claim that finds nothing,
    // after every commit that recorded an event, costs one round trip instead of three). Claiming counts the attempt:
    // one cut short by a crash may have reached the endpoint.
    claim: async (now, leaseUntil, limit, perEndpoint, skip = []) => {
      const ids = await db.rows<{ delivery_id: string }>(
        "delivery_claim",
        `WITH busy AS (SELECT endpoint_id, count(*) AS n FROM webhook_deliveries WHERE delivery_id = ANY($4)
                       GROUP BY endpoint_id),
         due AS (SELECT d.delivery_id, d.endpoint_id, d.next_attempt_at, d.event_seq
           FROM webhook_deliveries d JOIN webhook_endpoints w ON w.endpoint_id = d.endpoint_id
           WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
             AND w.enabled AND NOT (d.delivery_id = ANY($4))
             AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.endpoint_id = d.endpoint_id AND b.n >= $5)
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
               AND p.order_key = d.order_key AND p.status = 'pending' AND p.event_seq < d.event_seq)
           ORDER BY d.next_attempt_at, d.event_seq LIMIT $3 FOR UPDATE OF d SKIP LOCKED),
         picked AS (SELECT r.delivery_id FROM (SELECT due.*, row_number() OVER (PARTITION BY due.endpoint_id
             ORDER BY due.next_attempt_at, due.event_seq) AS rank FROM due) r
           LEFT JOIN busy b ON b.endpoint_id = r.endpoint_id WHERE r.rank + coalesce(b.n, 0) <= $5)
         UPDATE webhook_deliveries SET lease_until = $2, attempts = attempts + 1
         WHERE delivery_id IN (SELECT delivery_id FROM picked) RETURNING delivery_id`,
        [now, leaseUntil, limit, skip, perEndpoint],
      );
      if (ids.length === 0) return [];
      const rows = await db.rows(
        "delivery_claimed",
        `SELECT ${DELIVERY_COLUMNS}, e.seq, e.type, e.order_key, e.data, e.created_at AS event_created_at, w.url, w.secret_sealed
           ${FROM} JOIN webhook_endpoints w ON w.endpoint_id = d.endpoint_id WHERE d.delivery_id = ANY($1)
           ORDER BY d.next_attempt_at, d.event_seq`,
        [ids.map((r) => r.delivery_id)],
      );
      return rows.map(claimed);
    },
    renew: async (ids, leaseUntil) => {
      if (ids.length === 0) return;
      await db.count(
        "delivery_renew",
        "UPDATE webhook_deliveries SET lease_until = $1 WHERE delivery_id = ANY($2) AND status = 'pending'",
        [leaseUntil, ids],
      );
    },
    attempted: (deliveryId, endpointId, r) =>
      db.unit(async () => {
        await db.count(
          "delivery_attempted",
          `UPDATE webhook_deliveries SET status = $1, last_response_code = $2, last_error = $3,
             last_attempt_at = $4, next_attempt_at = $5, lease_until = NULL WHERE delivery_id = $6`,
          [
            r.ok ? "delivered" : r.nextAttemptAt === null ? "failed" : "pending",
            r.responseCode,
            r.error,
            r.at,
            r.ok ? null : r.nextAttemptAt,
            deliveryId,
          ],
        );
        if (r.ok)
          await db.count(
            "webhook_succeeded",
            "UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = $1 AND failing_since IS NOT NULL",
            [endpointId],
          );
        else
          await db.count(
            "webhook_failing",
            "UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, $1) WHERE endpoint_id = $2",
            [r.at, endpointId],
          );
      }),
  };
}

function claimed(r: Row): ClaimedDelivery {
  return {
    delivery: toDelivery(r),
    event: toEvent({ ...r, created_at: r.event_created_at }),
    url: r.url as string,
    secretSealed: r.secret_sealed as string,
  };
}
