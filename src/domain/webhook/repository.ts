import type { EventRecord } from "../log/repository.js";

/** A webhook endpoint as stored; the secret only sealed (KeySealer), bound to the endpoint's id. */
export interface WebhookEndpointRecord {
  endpointId: string;
  accountId: string;
  url: string;
  /** Empty: every type. */
  eventTypes: string[];
  description: string;
  secretSealed: string;
  enabled: boolean;
  disabledReason: string;
  createdAt: number;
  /** The first failure since the last success; null while deliveries succeed. */
  failingSince: number | null;
}

/** Where a delivery stands. */
export type DeliveryStatus = "pending" | "delivered" | "failed";

/** One event's delivery to one endpoint. */
export interface DeliveryRecord {
  deliveryId: string;
  endpointId: string;
  accountId: string;
  eventSeq: number;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastResponseCode: number;
  lastError: string;
  lastAttemptAt: number | null;
  nextAttemptAt: number | null;
  createdAt: number;
}

/** A delivery claimed by one dispatcher until `leaseUntil`, with what it needs to send it. */
export interface ClaimedDelivery {
  delivery: DeliveryRecord;
  event: EventRecord;
  url: string;
  secretSealed: string;
}

/** The outcome of one attempt. */
export interface AttemptResult {
  at: number;
  /** The HTTP status, 0 when none answered. */
  responseCode: number;
  error: string;
  /** Delivered (2xx). */
  ok: boolean;
  /** When to try again after a failure; null: give up (failed). */
  nextAttemptAt: number | null;
}

/** Webhook endpoints and their deliveries. */
export interface WebhookRepository {
  insertEndpoint(e: WebhookEndpointRecord): Promise<void>;
  updateEndpoint(e: WebhookEndpointRecord): Promise<void>;
  /** Deletes the endpoint and its deliveries. */
  deleteEndpoint(endpointId: string): Promise<void>;
  endpoint(endpointId: string): Promise<WebhookEndpointRecord | undefined>;
  /** The account's endpoints, oldest first. */
  endpoints(accountId: string): Promise<WebhookEndpointRecord[]>;
  /** One endpoint's deliveries, newest first. */
  deliveries(endpointId: string, limit: number, status: DeliveryStatus | undefined): Promise<DeliveryRecord[]>;
  delivery(deliveryId: string): Promise<DeliveryRecord | undefined>;
  /** Makes a delivery pending again, due at `at`. */
  resend(deliveryId: string, at: number): Promise<void>;
  /**
   * Claims up to `limit` due deliveries of enabled endpoints until `leaseUntil`: of each endpoint's deliveries with
   * one order key, only the oldest pending one, so they arrive in order. Dispatchers on other instances skip what
   * this one claimed; `skip` names deliveries the caller is attempting already. The caller holds at most
   * `perEndpoint` deliveries of one endpoint, those in `skip` included: an endpoint at its share is passed over, so
   * its slow attempts cannot take every slot (a call may answer fewer than `limit` while others are due: call again
   * while it answers some). Claiming counts an attempt (`attempts` of the answer includes it).
   */
  claim(
    now: number,
    leaseUntil: number,
    limit: number,
    perEndpoint: number,
    skip?: readonly string[],
  ): Promise<ClaimedDelivery[]>;
  /**
   * Extends the claims of deliveries still being attempted (their holder is alive). A holder that dies stops
   * renewing: its claims lapse within one lease and another dispatcher takes them.
   */
  renew(deliveryIds: readonly string[], leaseUntil: number): Promise<void>;
  /**
   * Records an attempt of a claimed delivery and releases it; keeps the endpoint's failure record. The attempt was
   * counted when it was claimed (from then it may have reached the endpoint, even if its holder dies).
   */
  attempted(deliveryId: string, endpointId: string, r: AttemptResult): Promise<void>;
}
