import type { EventData, EventRecord, EventType } from "../domain/log/repository.js";
import type { DeliveryRecord, DeliveryStatus, WebhookEndpointRecord } from "../domain/webhook/repository.js";
import { numOrNull as num } from "./row-values.js";

// The rows of the event and webhook tables as both back ends read them (snake_case, numbers for times).
type Row = Record<string, unknown>;

/** The columns of a delivery as listed, with its event's id and type. */
export const DELIVERY_COLUMNS = `d.delivery_id, d.endpoint_id, d.account_id, d.event_seq, e.event_id, e.type AS event_type,
  d.status, d.attempts, d.last_response_code, d.last_error, d.last_attempt_at, d.next_attempt_at, d.created_at`;

/** An events row as the domain's record. */
export const toEvent = (r: Row): EventRecord => ({
  seq: Number(r.seq),
  eventId: r.event_id as string,
  accountId: r.account_id as string,
  type: r.type as EventType,
  orderKey: r.order_key as string,
  data: JSON.parse(r.data as string) as EventData,
  createdAt: Number(r.created_at),
});

/** A webhook_endpoints row as the domain's record. */
export const toEndpoint = (r: Row): WebhookEndpointRecord => ({
  endpointId: r.endpoint_id as string,
  accountId: r.account_id as string,
  url: r.url as string,
  eventTypes: JSON.parse(r.event_types as string) as string[],
  description: r.description as string,
  secretSealed: r.secret_sealed as string,
  enabled: r.enabled === true || r.enabled === 1,
  disabledReason: r.disabled_reason as string,
  createdAt: Number(r.created_at),
  failingSince: num(r.failing_since),
});

/** A delivery row (DELIVERY_COLUMNS) as the domain's record. */
export const toDelivery = (r: Row): DeliveryRecord => ({
  deliveryId: r.delivery_id as string,
  endpointId: r.endpoint_id as string,
  accountId: r.account_id as string,
  eventSeq: Number(r.event_seq),
  eventId: r.event_id as string,
  eventType: r.event_type as string,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  lastResponseCode: Number(r.last_response_code),
  lastError: r.last_error as string,
  lastAttemptAt: num(r.last_attempt_at),
  nextAttemptAt: num(r.next_attempt_at),
  createdAt: Number(r.created_at),
});
