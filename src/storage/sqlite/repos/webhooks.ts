import type Database from "better-sqlite3";
import type { EventRecord, EventRepository } from "../../../domain/log/repository.js";
import type { ClaimedDelivery, WebhookEndpointRecord, WebhookRepository } from "../../../domain/webhook/repository.js";
import type { Sync } from "../../sync.js";
import { DELIVERY_COLUMNS, toDelivery, toEndpoint, toEvent } from "../../webhook-rows.js";
import type { Db } from "../database.js";

type Row = Record<string, unknown>;

/** The event log in SQLite: one writer at a time, so the account's counter orders events as they commit. */
export function sqliteEvents(db: Db): Sync<EventRepository> {
  const bump = db.prepare<[string, number], { last_seq: number }>(
    `INSERT INTO event_counters (account_id, last_seq) VALUES (?, ?)
     ON CONFLICT (account_id) DO UPDATE SET last_seq = last_seq + excluded.last_seq RETURNING last_seq`,
  );
  const insert = db.prepare(
    "INSERT INTO events (account_id, seq, event_id, type, order_key, data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const insertDelivery = db.prepare(
    `INSERT INTO webhook_deliveries (delivery_id, endpoint_id, account_id, event_seq, order_key, status, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
  );
  const append = db.transaction((items: Parameters<EventRepository["append"]>[0]): EventRecord[] => {
    const first = items[0];
    if (!first) return [];
    const last = bump.get(first.event.accountId, items.length)!.last_seq;
    return items.map(({ event, deliveries }, i) => {
      if (event.accountId !== first.event.accountId) throw new Error("events of one account per append");
      const seq = last - items.length + 1 + i;
      insert.run(
        event.accountId,
        seq,
        event.eventId,
        event.type,
        event.orderKey,
        JSON.stringify(event.data),
        event.createdAt,
      );
      for (const d of deliveries)
        insertDelivery.run(
          d.deliveryId,
          d.endpointId,
          event.accountId,
          seq,
          event.orderKey,
          event.createdAt,
          event.createdAt,
        );
      return { ...event, seq };
    });
  });
  const oldest = db.prepare<[number, number], { account_id: string; seq: number }>(
    `SELECT e.account_id, e.seq FROM events e WHERE e.created_at < ? AND NOT EXISTS (
       SELECT 1 FROM webhook_deliveries d WHERE d.account_id = e.account_id AND d.event_seq = e.seq AND d.status = 'pending')
     LIMIT ?`,
  );
  const drop = db.prepare("DELETE FROM events WHERE account_id = ? AND seq = ?");
  const lastSeq = db.prepare<[string], { last_seq: number }>(
    "SELECT last_seq FROM event_counters WHERE account_id = ?",
  );
  const prune = db.transaction((before: number, limit: number) => {
    const rows = oldest.all(before, limit);
    for (const r of rows) drop.run(r.account_id, r.seq);
    return rows.length;
  });
  // One statement per number of types filtered on, prepared at its first use: every read of the log by the shared
  // readers (two a send under fan-out) used to compile its statement again.
  const listings = new Map<number, Database.Statement<unknown[], Row>>();
  const listing = (types: number) => {
    let s = listings.get(types);
    if (!s) {
      const filter = types === 0 ? "" : ` AND type IN (${Array(types).fill("?").join(", ")})`;
      s = db.prepare<unknown[], Row>(
        `SELECT * FROM events WHERE account_id = ? AND seq > ?${filter} ORDER BY seq LIMIT ?`,
      );
      listings.set(types, s);
    }
    return s;
  };
  return {
    append: (items) => append.immediate(items),
    add: async (items) => void append.immediate(items),
    list: (accountId, afterSeq, limit, types) =>
      listing(types.length)
        .all(accountId, afterSeq, ...types, limit)
        .map(toEvent),
    lastSeq: (accountId) => lastSeq.get(accountId)?.last_seq ?? 0,
    prune: (before, limit) => prune.immediate(before, limit),
  };
}

/** Webhook endpoints and deliveries in SQLite; a claim is one transaction of this one process. */
export function sqliteWebhooks(db: Db): Sync<WebhookRepository> {
  const params = (e: WebhookEndpointRecord) => ({
    endpointId: e.endpointId,
    accountId: e.accountId,
    url: e.url,
    eventTypes: JSON.stringify(e.eventTypes),
    description: e.description,
    secretSealed: e.secretSealed,
    enabled: e.enabled ? 1 : 0,
    disabledReason: e.disabledReason,
    createdAt: e.createdAt,
    failingSince: e.failingSince,
  });
  const insert = db.prepare(
    `INSERT INTO webhook_endpoints (endpoint_id, account_id, url, event_types, description, secret_sealed, enabled,
       disabled_reason, created_at, failing_since)
     VALUES (@endpointId, @accountId, @url, @eventTypes, @description, @secretSealed, @enabled, @disabledReason, @createdAt, @failingSince)`,
  );
  const update = db.prepare(
    `UPDATE webhook_endpoints SET url = @url, event_types = @eventTypes, description = @description, enabled = @enabled,
       disabled_reason = @disabledReason, failing_since = @failingSince, secret_sealed = @secretSealed
     WHERE endpoint_id = @endpointId`,
  );
  const remove = db.prepare("DELETE FROM webhook_endpoints WHERE endpoint_id = ?");
  const byId = db.prepare<[string], Row>("SELECT * FROM webhook_endpoints WHERE endpoint_id = ?");
  const list = db.prepare<[string], Row>(
    "SELECT * FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, endpoint_id",
  );
  const FROM = "FROM webhook_deliveries d JOIN events e ON e.account_id = d.account_id AND e.seq = d.event_seq";
  const deliveries = db.prepare<[string, number], Row>(
    `SELECT ${DELIVERY_COLUMNS} ${FROM} WHERE d.endpoint_id = ? ORDER BY d.event_seq DESC, d.delivery_id LIMIT ?`,
  );
  const deliveriesWith = db.prepare<[string, string, number], Row>(
    `SELECT ${DELIVERY_COLUMNS} ${FROM} WHERE d.endpoint_id = ? AND d.status = ? ORDER BY d.event_seq DESC, d.delivery_id LIMIT ?`,
  );
  const delivery = db.prepare<[string], Row>(`SELECT ${DELIVERY_COLUMNS} ${FROM} WHERE d.delivery_id = ?`);
  const resend = db.prepare(
    "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, lease_until = NULL WHERE delivery_id = ?",
  );
  // Of each endpoint's pending deliveries with one order key, only the oldest is due: they arrive in order. `busy`
  // counts the caller's attempts running per endpoint (from `skip`, JSON): an endpoint at its share is passed over
  // before the limit is taken (so a stuck endpoint's backlog cannot fill it), and of the rest each endpoint gets up
  // to its share.
  const due = db.prepare<[{ skip: string; now: number; perEndpoint: number; limit: number }], { delivery_id: string }>(
    `WITH busy AS (SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
                   WHERE delivery_id IN (SELECT value FROM json_each(@skip)) GROUP BY endpoint_id),
     due AS (SELECT d.delivery_id, d.endpoint_id, d.next_attempt_at, d.event_seq
       FROM webhook_deliveries d JOIN webhook_endpoints w ON w.endpoint_id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= @now AND (d.lease_until IS NULL OR d.lease_until <= @now)
         AND w.enabled = 1 AND d.delivery_id NOT IN (SELECT value FROM json_each(@skip))
         AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.endpoint_id = d.endpoint_id AND b.n >= @perEndpoint)
         AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id
           AND p.order_key = d.order_key AND p.status = 'pending' AND p.event_seq < d.event_seq)
       ORDER BY d.next_attempt_at, d.event_seq LIMIT @limit),
     ranked AS (SELECT due.*, row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at,
       due.event_seq) AS rank FROM due)
     SELECT r.delivery_id FROM ranked r LEFT JOIN busy b ON b.endpoint_id = r.endpoint_id
     WHERE r.rank + coalesce(b.n, 0) <= @perEndpoint ORDER BY r.next_attempt_at, r.event_seq`,
  );
  const lease = db.prepare(
    "UPDATE webhook_deliveries SET lease_until = ?, attempts = attempts + 1 WHERE delivery_id = ?",
  );
  const renew = db.prepare(
    "UPDATE webhook_deliveries SET lease_until = ? WHERE delivery_id = ? AND status = 'pending'",
  );
  const renewAll = db.transaction((ids: readonly string[], leaseUntil: number) => {
    for (const id of ids) renew.run(leaseUntil, id);
  });
  const claimedRow = db.prepare<[string], Row>(
    `SELECT ${DELIVERY_COLUMNS}, e.seq, e.type, e.order_key, e.data, e.created_at AS event_created_at, w.url, w.secret_sealed
     ${FROM} JOIN webhook_endpoints w ON w.endpoint_id = d.endpoint_id WHERE d.delivery_id = ?`,
  );
  const claim = db.transaction(
    (now: number, leaseUntil: number, limit: number, perEndpoint: number, skip: readonly string[]) => {
      return due
        .all({ skip: JSON.stringify(skip), now, perEndpoint, limit })
        .map(({ delivery_id }): ClaimedDelivery => {
          lease.run(leaseUntil, delivery_id);
          return claimed(claimedRow.get(delivery_id)!);
        });
    },
  );
  const record = db.prepare(
    `UPDATE webhook_deliveries SET status = @status, last_response_code = @code,
       last_error = @error, last_attempt_at = @at, next_attempt_at = @next, lease_until = NULL WHERE delivery_id = @id`,
  );
  const succeeded = db.prepare("UPDATE webhook_endpoints SET failing_since = NULL WHERE endpoint_id = ?");
  const failing = db.prepare(
    "UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE endpoint_id = ?",
  );
  const attempted = db.transaction(
    (deliveryId: string, endpointId: string, r: Parameters<WebhookRepository["attempted"]>[2]) => {
      record.run({
        status: r.ok ? "delivered" : r.nextAttemptAt === null ? "failed" : "pending",
        code: r.responseCode,
        error: r.error,
        at: r.at,
        next: r.ok ? null : r.nextAttemptAt,
        id: deliveryId,
      });
      if (r.ok) succeeded.run(endpointId);
      else failing.run(r.at, endpointId);
    },
  );
  return {
    insertEndpoint: (e) => void insert.run(params(e)),
    updateEndpoint: (e) => void update.run(params(e)),
    deleteEndpoint: (id) => void remove.run(id),
    endpoint: (id) => {
      const r = byId.get(id);
      return r && toEndpoint(r);
    },
    endpoints: (accountId) => list.all(accountId).map(toEndpoint),
    deliveries: (endpointId, limit, status) =>
      (status === undefined ? deliveries.all(endpointId, limit) : deliveriesWith.all(endpointId, status, limit)).map(
        toDelivery,
      ),
    delivery: (id) => {
      const r = delivery.get(id);
      return r && toDelivery(r);
    },
    resend: (id, at) => void resend.run(at, id),
    claim: (now, leaseUntil, limit, perEndpoint, skip = []) =>
      claim.immediate(now, leaseUntil, limit, perEndpoint, skip),
    renew: (ids, leaseUntil) => renewAll.immediate(ids, leaseUntil),
    attempted: (deliveryId, endpointId, r) => attempted.immediate(deliveryId, endpointId, r),
  };
}

/** A claimed delivery's joined row as the domain's value. */
export function claimed(r: Row): ClaimedDelivery {
  return {
    delivery: toDelivery(r),
    event: toEvent({ ...r, created_at: r.event_created_at }),
    url: r.url as string,
    secretSealed: r.secret_sealed as string,
  };
}
