import type { AuditLog } from "../domain/audit/audit-log.js";
import type { EventLog } from "../domain/log/event-log.js";
import type { LogFeed } from "../domain/log/log-feed.js";
import type { Repositories } from "../domain/store.js";
import type { KeySealer } from "../domain/token/key-sealer.js";
import { Dispatcher, type Send } from "../domain/webhook/dispatcher.js";
import type { TargetPolicy } from "../domain/webhook/target-policy.js";
import { WebhookService } from "../domain/webhook/webhook-service.js";
import type { Metrics } from "../observability/metrics.js";
import { observedSend } from "../observability/spans.js";
import { eventBody } from "../protocol/services/webhook-handlers.js";
import { httpSender } from "../webhooks/http-sender.js";
import { standardSign } from "../webhooks/signer.js";
import { type Base, warnOn } from "./base.js";

export interface WebhookDeps {
  eventLog: EventLog;
  /** The store's announcements of appends (the dispatcher wakes on each). */
  feed: LogFeed;
  audit: AuditLog<Repositories>;
  sealer: KeySealer;
  targets: TargetPolicy;
  metrics: Metrics;
  /** How webhook deliveries are posted (a test may swap in its own). */
  send: Send | undefined;
  /** False: no webhook dispatcher in this process (the outbox still fills; another instance delivers). */
  dispatch: boolean | undefined;
}

export interface WebhookParts {
  webhooks: WebhookService;
  /** Delivers the outbox's webhooks off the request path (undefined when turned off). */
  dispatcher: Dispatcher | undefined;
}

/** Webhook endpoints and the dispatcher that delivers the outbox to them. */
export function composeWebhooks(b: Base, d: WebhookDeps): WebhookParts {
  const { store, clock } = b;
  const { sealer, eventLog } = d;
  const w = b.config.webhooks;
  const webhooks = new WebhookService({ ...store, clock, sealer, policy: d.targets, audit: d.audit });
  const development = d.targets.development;
  const send = d.send ?? httpSender({ development, timeoutMs: w.timeoutMs });
  const dispatcher =
    d.dispatch === false
      ? undefined
      : new Dispatcher({
          store,
          log: eventLog,
          feed: d.feed,
          clock,
          sealer,
          send: observedSend(send, d.metrics, b.tracer),
          sign: standardSign,
          render: eventBody,
          settings: {
            retryDelaysMs: w.retryDelaysMs,
            disableAfterMs: w.disableAfterSeconds * 1000,
            // Renewed while its attempt runs: a claim of an instance killed mid-attempt lapses within 3 s.
            leaseMs: 3000,
            pollMs: w.pollMs,
            batch: w.slots,
            perEndpoint: w.slotsPerEndpoint,
            retentionMs: w.retentionDays * 86400_000,
          },
          onError: warnOn(b.log, "webhook dispatcher"),
        });
  return { webhooks, dispatcher };
}
