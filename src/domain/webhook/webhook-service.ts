import { randomBytes } from "node:crypto";
import type { Sealer } from "../account/chatbot-rules.js";
import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { EVENT_TYPES } from "../log/event-types.js";
import type { EventRecord, EventRepository } from "../log/repository.js";
import { optionalText } from "../validate.js";
import type { DeliveryRecord, DeliveryStatus, WebhookEndpointRecord, WebhookRepository } from "./repository.js";
import { checkTarget, requireWebhookUrl, type TargetPolicy } from "./target-policy.js";

/** Endpoints one account may have. */
export const MAX_ENDPOINTS = 20;
const STATUSES: readonly DeliveryStatus[] = ["pending", "delivered", "failed"];

/** What the webhook use cases need. */
export interface WebhookServiceDeps {
  webhooks: WebhookRepository;
  events: EventRepository;
  clock: Clock;
  sealer: Sealer;
  policy: TargetPolicy;
  audit: AuditLog<AuditTx & { webhooks: WebhookRepository }>;
}

/** The `boundTo` of an endpoint's sealed secret: a sealed value moved to another endpoint does not open. */
export const secretBinding = (endpointId: string) => `webhook:${endpointId}`;

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The account's webhook endpoints, its event log and the deliveries. */
export class WebhookService {
  constructor(private readonly d: WebhookServiceDeps) {}

  /** Adds an endpoint; the secret is answered here only (stored sealed). */
  async createEndpoint(
    caller: AccountCaller,
    input: { url: string; eventTypes: readonly string[]; description: string },
  ): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const url = await this.requireTarget(input.url);
    const eventTypes = requireEventTypes("event_types", input.eventTypes);
    const description = optionalText("description", input.description);
    if ((await this.d.webhooks.endpoints(caller.accountId)).length >= MAX_ENDPOINTS)
      throw new DomainError("failed_precondition", `an account has at most ${MAX_ENDPOINTS} webhook endpoints`);
    const endpointId = newId();
    const secret = newSigningSecret();
    const endpoint: WebhookEndpointRecord = {
      endpointId,
      accountId: caller.accountId,
      url,
      eventTypes,
      description,
      secretSealed: this.d.sealer.seal(secret, secretBinding(endpointId)),
      enabled: true,
      disabledReason: "",
      createdAt: this.d.clock.now(),
      failingSince: null,
    };
    await this.d.audit.within(caller, "webhook_endpoint.created", endpointId, (tx) =>
      tx.webhooks.insertEndpoint(endpoint),
    );
    return { endpoint, secret };
  }

  /** The account's endpoints, oldest first. */
  listEndpoints(caller: AccountCaller): Promise<WebhookEndpointRecord[]> {
    return this.d.webhooks.endpoints(caller.accountId);
  }

  /** Changes what is given; enabling clears the failure record, so the pending deliveries go out again. */
  async updateEndpoint(
    caller: AccountCaller,
    input: {
      endpointId: string;
      url?: string | undefined;
      eventTypes?: readonly string[] | undefined;
      description?: string | undefined;
      enabled?: boolean | undefined;
    },
  ): Promise<WebhookEndpointRecord> {
    const e = await this.endpoint(caller, input.endpointId);
    const next: WebhookEndpointRecord = { ...e };
    if (input.url !== undefined) next.url = await this.requireTarget(input.url);
    if (input.eventTypes !== undefined) next.eventTypes = requireEventTypes("event_types.types", input.eventTypes);
    if (input.description !== undefined) next.description = optionalText("description", input.description);
    if (input.enabled === true) Object.assign(next, { enabled: true, disabledReason: "", failingSince: null });
    if (input.enabled === false && e.enabled)
      Object.assign(next, { enabled: false, disabledReason: "disabled by the account" });
    await this.d.audit.within(caller, "webhook_endpoint.updated", e.endpointId, (tx) =>
      tx.webhooks.updateEndpoint(next),
    );
    return next;
  }

  /** A new signing secret, answered here only (stored sealed); the next deliveries are signed with it. */
  async rotateSecret(
    caller: AccountCaller,
    endpointId: string,
  ): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
    const e = await this.endpoint(caller, endpointId);
    const secret = newSigningSecret();
    const next = { ...e, secretSealed: this.d.sealer.seal(secret, secretBinding(e.endpointId)) };
    await this.d.audit.within(caller, "webhook_endpoint.updated", e.endpointId, (tx) =>
      tx.webhooks.updateEndpoint(next),
    );
    return { endpoint: next, secret };
  }

  /** Removes the endpoint and its deliveries. */
  async deleteEndpoint(caller: AccountCaller, endpointId: string): Promise<void> {
    const e = await this.endpoint(caller, endpointId);
    await this.d.audit.within(caller, "webhook_endpoint.deleted", e.endpointId, (tx) =>
      tx.webhooks.deleteEndpoint(e.endpointId),
    );
  }

  /** One page of the account's log after the cursor, in commit order. */
  async listEvents(
    caller: AccountCaller,
    input: { after: string; limit: number | undefined; types: readonly string[] },
  ): Promise<{ events: EventRecord[]; nextCursor: string; hasMore: boolean }> {
    const after = parseCursor(input.after);
    const limit = boundedLimit("limit", input.limit, 100, 1000);
    const types = requireEventTypes("types", input.types);
    const rows = await this.d.events.list(caller.accountId, after, limit + 1, types);
    const events = rows.slice(0, limit);
    const last = events[events.length - 1];
    return { events, nextCursor: last ? String(last.seq) : input.after, hasMore: rows.length > limit };
  }

  /** One endpoint's deliveries, newest first. */
  async listDeliveries(
    caller: AccountCaller,
    input: { endpointId: string; limit: number | undefined; status: string },
  ): Promise<DeliveryRecord[]> {
    const e = await this.endpoint(caller, input.endpointId);
    if (input.status !== "" && !STATUSES.includes(input.status as DeliveryStatus))
      throw invalidArgument("status", `must be one of ${STATUSES.join(", ")}`);
    const limit = boundedLimit("limit", input.limit, 50, 500);
    return this.d.webhooks.deliveries(
      e.endpointId,
      limit,
      input.status === "" ? undefined : (input.status as DeliveryStatus),
    );
  }

  /** Makes the delivery pending again, due now. */
  async resend(caller: AccountCaller, endpointId: string, deliveryId: string): Promise<DeliveryRecord> {
    const e = await this.endpoint(caller, endpointId);
    const id = requireUuid("delivery_id", deliveryId);
    const delivery = await this.d.webhooks.delivery(id);
    if (!delivery || delivery.endpointId !== e.endpointId) throw notFound("delivery");
    await this.d.webhooks.resend(id, this.d.clock.now());
    return (await this.d.webhooks.delivery(id))!;
  }

  private async endpoint(caller: AccountCaller, endpointId: string): Promise<WebhookEndpointRecord> {
    const e = await this.d.webhooks.endpoint(requireUuid("endpoint_id", endpointId));
    // Another account's endpoint answers exactly as one that does not exist.
    if (!e || e.accountId !== caller.accountId) throw notFound("webhook endpoint");
    return e;
  }

  private async requireTarget(raw: string): Promise<string> {
    const url = requireWebhookUrl("url", raw, this.d.policy.development);
    await checkTarget("url", url, this.d.policy);
    return url;
  }
}

/** Checks a list of event types: each known, no repeats. */
export function requireEventTypes(field: string, types: readonly string[]): string[] {
  for (const t of types)
    if (!(EVENT_TYPES as readonly string[]).includes(t))
      throw invalidArgument(
        field,
        `${JSON.stringify(t.slice(0, 64))} is not an event type (${EVENT_TYPES.join(", ")})`,
      );
  return [...new Set(types)];
}

/** A cursor of ListEvents: "" (the start) or the decimal place of an event. */
export function parseCursor(raw: string): number {
  if (raw === "") return 0;
  if (!/^\d{1,15}$/.test(raw)) throw invalidArgument("after", "is not a cursor of this log");
  return Number(raw);
}

function boundedLimit(field: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) throw invalidArgument(field, `must be from 1 to ${max}`);
  return value;
}
