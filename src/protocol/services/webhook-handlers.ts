import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  EventSchema,
  type WebhookDeliverySchema,
  type WebhookEndpointSchema,
  type WebhookService as WebhookServiceDesc,
} from "../../../gen/aiagent/v1/webhook_service_pb.js";
import type { EventRecord } from "../../domain/log/repository.js";
import { isoTime } from "../../domain/time.js";
import type { DeliveryRecord, WebhookEndpointRecord } from "../../domain/webhook/repository.js";
import type { WebhookService } from "../../domain/webhook/webhook-service.js";
import { auditedCaller } from "../audited.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";
import { toDocumentedJson } from "../rest/json-codec.js";
import { message, summary } from "./conversation-handlers.js";
import { activity, note } from "./note-handlers.js";

const iso = (t: number | null): string => (t === null ? "" : isoTime(t));

/** An endpoint as answered: never its secret. */
function endpoint(e: WebhookEndpointRecord): MessageInitShape<typeof WebhookEndpointSchema> {
  return {
    endpointId: e.endpointId,
    url: e.url,
    eventTypes: e.eventTypes,
    description: e.description,
    status: e.enabled ? "enabled" : "disabled",
    disabledReason: e.disabledReason,
    createdAt: isoTime(e.createdAt),
    failingSince: iso(e.failingSince),
  };
}

function delivery(d: DeliveryRecord): MessageInitShape<typeof WebhookDeliverySchema> {
  return {
    deliveryId: d.deliveryId,
    endpointId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastResponseCode: d.lastResponseCode,
    lastError: d.lastError,
    lastAttemptAt: iso(d.lastAttemptAt),
    nextAttemptAt: d.status === "pending" ? iso(d.nextAttemptAt) : "",
    createdAt: isoTime(d.createdAt),
  };
}

/** An event of the log as the contract shapes it (ListEvents, and every delivery's body). */
export function eventMessage(e: EventRecord): MessageInitShape<typeof EventSchema> {
  const d = e.data;
  return {
    eventId: e.eventId,
    cursor: String(e.seq),
    type: e.type,
    createdAt: isoTime(e.createdAt),
    accountId: e.accountId,
    data: {
      conversationId: d.conversationId ?? "",
      ...(d.message ? { message: message(d.message) } : {}),
      ...(d.conversation ? { conversation: summary(d.conversation) } : {}),
      chatbotId: d.chatbotId ?? "",
      userId: d.userId ?? "",
      revoked: d.revoked ?? 0,
      endpointId: d.endpointId ?? "",
      reason: d.reason ?? "",
      contactId: d.contactId ?? "",
      redacted: d.redacted ?? false,
      ...(d.note ? { note: note(d.note) } : {}),
      ...(d.activity ? { activity: activity(d.activity) } : {}),
    },
  };
}

/** A delivery's JSON body: the event exactly as the JSON route of ListEvents shows it. */
export function eventBody(e: EventRecord): string {
  return JSON.stringify(toDocumentedJson(EventSchema, eventMessage(e)));
}

/** The WebhookService methods, on the account's caller the gate admitted (ID token, admin). */
export function webhookHandlers(webhooks: WebhookService): Handlers<typeof WebhookServiceDesc> {
  return {
    async createWebhookEndpoint(req, call) {
      const r = await webhooks.createEndpoint(auditedCaller(call), {
        url: req.url,
        eventTypes: req.eventTypes,
        description: req.description,
      });
      return { data: { endpoint: endpoint(r.endpoint), secret: r.secret } };
    },
    async listWebhookEndpoints(_req, call) {
      return { data: { endpoints: (await webhooks.listEndpoints(accountCaller(call.auth))).map(endpoint) } };
    },
    async updateWebhookEndpoint(req, call) {
      const e = await webhooks.updateEndpoint(auditedCaller(call), {
        endpointId: req.endpointId,
        url: req.url,
        eventTypes: req.eventTypes?.types,
        description: req.description,
        enabled: req.enabled,
      });
      return { data: endpoint(e) };
    },
    async rotateWebhookSecret(req, call) {
      const r = await webhooks.rotateSecret(auditedCaller(call), req.endpointId);
      return { data: { endpoint: endpoint(r.endpoint), secret: r.secret } };
    },
    async deleteWebhookEndpoint(req, call) {
      await webhooks.deleteEndpoint(auditedCaller(call), req.endpointId);
      return {};
    },
    async listEvents(req, call) {
      const p = await webhooks.listEvents(accountCaller(call.auth), {
        after: req.after,
        limit: req.limit,
        types: req.types,
      });
      return { data: { events: p.events.map(eventMessage), nextCursor: p.nextCursor, hasMore: p.hasMore } };
    },
    async listWebhookDeliveries(req, call) {
      const list = await webhooks.listDeliveries(accountCaller(call.auth), {
        endpointId: req.endpointId,
        limit: req.limit,
        status: req.status,
      });
      return { data: { deliveries: list.map(delivery) } };
    },
    async resendWebhookDelivery(req, call) {
      return { data: delivery(await webhooks.resend(accountCaller(call.auth), req.endpointId, req.deliveryId)) };
    },
  };
}
