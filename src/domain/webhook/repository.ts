import type { ActivityRecord } from "../conversation/activity.js";
import type { ConversationSummary } from "../conversation/events.js";
import type { NoteRecord } from "../conversation/notes.js";
import type { MessageRecord } from "../conversation/repository.js";

import { EVENT_TYPES } from "./event-types.js";

export { EVENT_TYPES };

/** One kind of event. */
export type EventType = (typeof EVENT_TYPES)[number];

/** What an event is about; each type fills its own fields. */
export interface EventData {
  conversationId?: string;
  message?: MessageRecord;
  conversation?: ConversationSummary;
  chatbotId?: string;
  userId?: string;
  revoked?: number;
  endpointId?: string;
  reason?: string;
  contactId?: string;
  /** note.created: the internal note. */
  note?: NoteRecord;
  /** conversation.activity: a line of the conversation's timeline (who did what). */
  activity?: ActivityRecord;
  /** Set (alone) when the event's data was erased with its customer or its conversation. */
  redacted?: boolean;
}

/** An event to record; the log gives it its place. */
export interface NewEvent {
  eventId: string;
  accountId: string;
  type: EventType;
  /** Deliveries of events with the same key (the conversation) go to each endpoint in log order. */
  orderKey: string;
  data: EventData;
  createdAt: number;
}

/** An event as recorded: `seq` is its place in its account's log, in commit order, from 1 without gaps. */
export interface EventRecord extends NewEvent {
  seq: number;
}

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

/** A delivery to create with its event. */
export interface NewDelivery {
  deliveryId: string;
  endpointId: string;
}

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

/** The account's event log; written only inside the unit of work of the change an event describes. */
export interface EventRepository {
  /**
   * Appends events to their account's log after its last (one account per call), each with the deliveries given
   * for it; answers them with their places.
   */
  append(events: { event: NewEvent; deliveries: NewDelivery[] }[]): Promise<EventRecord[]>;
  /**
   * Appends like `append`, answering nothing: in a unit of work a back end may send it with the unit's next statement
   * or its commit (one round trip fewer); a failure fails the unit.
   */
  add(events: { event: NewEvent; deliveries: NewDelivery[] }[]): Promise<void>;
  /** Events of the account after `afterSeq`, in log order, of the given types (empty: all). */
  list(accountId: string, afterSeq: number, limit: number, types: readonly string[]): Promise<EventRecord[]>;
  /** The place of the account's last committed event; 0 before its first. */
  lastSeq(accountId: string): Promise<number>;
  /** Drops up to `limit` events older than `before` (with their deliveries), none still pending; answers the count. */
  prune(before: number, limit: number): Promise<number>;
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
