import type { Sealer } from "../account/chatbot-rules.js";
import type { Clock } from "../clock.js";
import { IDEMPOTENCY_WINDOW_MS } from "../idempotency/keys.js";
import type { IdempotencyRepository } from "../idempotency/repository.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import type { LogFeed } from "../log/log-feed.js";
import type { EventRecord, EventRepository } from "../log/repository.js";
import type { Transact } from "../unit.js";
import type { ClaimedDelivery, WebhookRepository } from "./repository.js";
import { nextAttempt } from "./retry.js";
import { secretBinding } from "./webhook-service.js";

/** How one POST went: the status when the endpoint answered (0 when not), else why not. */
export interface SendResult {
  status: number;
  error: string;
}

/** Posts a signed body to an endpoint (no redirects followed; the target's addresses checked at connection). */
export type Send = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<SendResult>;

/** The Standard Webhooks `webhook-signature` value of (id, timestamp in ms, body) under the secret. */
export type Sign = (secret: string, id: string, timestampMs: number, body: string) => string;

/** The dispatcher's settings. */
export interface DispatchSettings {
  /** Wait after each failed attempt; once spent, the delivery has failed. */
  retryDelaysMs: readonly number[];
  /** An endpoint failing without a success this long is disabled. */
  disableAfterMs: number;
  /**
   * How long a claim holds unless renewed: the dispatcher renews its claims while their attempts run, so a claim of
   * an instance that died lapses within this and another instance sends the delivery.
   */
  leaseMs: number;
  /** How often due deliveries are looked for (commits of this process wake it at once). */
  pollMs: number;
  /** Deliveries in flight at once (each conversation's in order; a slow endpoint holds only its own). */
  batch: number;
  /** Of those, deliveries to one endpoint: a stuck endpoint holds at most these slots, the rest serve the others. */
  perEndpoint: number;
  /** Events older than this are pruned (once none of their deliveries is pending). */
  retentionMs: number;
}

/** What the dispatcher needs. */
export interface DispatcherDeps {
  store: {
    webhooks: WebhookRepository;
    events: EventRepository;
    idempotency: IdempotencyRepository;
    /** The claims of the agent's replies: pruned with the keys they serve (conversation/replies.ts). */
    replies: { prune(before: number, limit: number): Promise<number> };
    transaction: Transact<LogTx & { webhooks: WebhookRepository }>;
    /** Resolves once every write committed so far is durable. */
    durable(): Promise<void>;
  };
  log: EventLog;
  /** Where appends to event logs are announced (this instance's and the others'): new deliveries may be due. */
  feed: Pick<LogFeed, "onAdvanced">;
  clock: Clock;
  sealer: Sealer;
  send: Send;
  sign: Sign;
  /** The event's JSON body, as the event log's JSON route shows it. */
  render(e: EventRecord): string;
  settings: DispatchSettings;
  /** Told of faults of the loop (storage unavailable); it goes on at its next poll. */
  onError(e: unknown): void;
}

const PRUNE_EVERY_MS = 3600_000;
const PRUNE_BATCH = 1000;

/**
 * Delivers the outbox off the request path: claims due deliveries (one instance each, in order per conversation),
 * posts them signed, records each attempt and schedules the next with back-off and jitter, disables an endpoint
 * failing for long (recording `webhook_endpoint.disabled`), and prunes the log past its retention (and expired
 * idempotency keys). Attempts run side by side: a slow one holds its slot and its conversation, not the others, and
 * one endpoint holds at most its share of the slots; their claims are renewed while they run, so a dead instance's
 * claims lapse within one lease.
 */
export class Dispatcher {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private pending = false;
  private readonly stop = new AbortController();
  private stopWatching: (() => void) | undefined;
  private lastPrune = 0;
  /** Attempts running, by delivery id. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private renewing: NodeJS.Timeout | undefined;

  constructor(private readonly d: DispatcherDeps) {}

  /** Starts the loop. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopWatching = this.d.feed.onAdvanced(() => this.nudge());
    this.renewing = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.d.settings.leaseMs / 3)));
    this.renewing.unref();
    this.loop = this.run();
  }

  /** Stops the loop; attempts in flight are abandoned (their claims lapse, and another pass sends them again). */
  async close(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopWatching?.();
    clearInterval(this.renewing);
    this.stop.abort();
    this.nudge();
    await this.loop;
    await Promise.all(this.inFlight.values());
  }

  /** One pass: claims and sends what is due, and waits for those attempts; answers how many it claimed. */
  async runOnce(): Promise<number> {
    const started = await this.claimAndStart();
    await Promise.all(started);
    return started.length;
  }

  /** Claims what is due, as many as free slots allow, and starts their attempts; answers them. */
  private async claimAndStart(): Promise<Promise<void>[]> {
    const now = this.d.clock.now();
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await this.d.store.events.prune(now - this.d.settings.retentionMs, PRUNE_BATCH);
      await this.d.store.idempotency.prune(now - IDEMPOTENCY_WINDOW_MS, PRUNE_BATCH);
      // A reply's claim serves retries under the message's key: past the key's window it has none to serve.
      await this.d.store.replies.prune(now - IDEMPOTENCY_WINDOW_MS, PRUNE_BATCH);
    }
    const free = this.d.settings.batch - this.inFlight.size;
    if (free <= 0) return [];
    const { leaseMs, perEndpoint } = this.d.settings;
    const claimed = await this.d.store.webhooks.claim(now, now + leaseMs, free, perEndpoint, [...this.inFlight.keys()]);
    // An event goes out only once its change is on disk (group commit acknowledges before the fsync): a receiver
    // never hears of a change that a power loss could still take back.
    if (claimed.length > 0) await this.d.store.durable();
    return claimed.map((c) => {
      const id = c.delivery.deliveryId;
      const p = this.attempt(c)
        .catch((e: unknown) => {
          if (this.running) this.d.onError(e);
        })
        .finally(() => {
          this.inFlight.delete(id);
          // A slot is free: look for more at once.
          this.nudge();
        });
      this.inFlight.set(id, p);
      return p;
    });
  }

  /** Keeps the claims of running attempts (a failure here only lets them lapse: at worst one is sent twice). */
  private async renew(): Promise<void> {
    if (this.inFlight.size === 0) return;
    await this.d.store.webhooks
      .renew([...this.inFlight.keys()], this.d.clock.now() + this.d.settings.leaseMs)
      .catch(() => undefined);
  }

  private nudge(): void {
    this.pending = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.pending = false;
      let n = 0;
      try {
        n = (await this.claimAndStart()).length;
      } catch (e) {
        if (this.running) this.d.onError(e);
      }
      if (!this.running) return;
      if (n > 0 || this.pending) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.d.settings.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async attempt(c: ClaimedDelivery): Promise<void> {
    const { delivery, event } = c;
    const body = this.d.render(event);
    const at = this.d.clock.now();
    let result: SendResult;
    try {
      const secret = this.d.sealer.open(c.secretSealed, secretBinding(delivery.endpointId));
      result = await this.d.send(
        c.url,
        {
          "content-type": "application/json",
          "user-agent": "aiagent-webhooks/1",
          "webhook-id": event.eventId,
          "webhook-timestamp": String(Math.floor(at / 1000)),
          "webhook-signature": this.d.sign(secret, event.eventId, at, body),
        },
        body,
        this.stop.signal,
      );
    } catch (e) {
      result = { status: 0, error: e instanceof Error ? e.message : String(e) };
    }
    // Stopped mid-attempt: nothing is recorded; the claim lapses and the delivery goes out again.
    if (this.stop.signal.aborted) return;
    const ok = result.status >= 200 && result.status < 300;
    const done = this.d.clock.now();
    await this.d.store.webhooks.attempted(delivery.deliveryId, delivery.endpointId, {
      at: done,
      responseCode: result.status,
      error: ok ? "" : (result.error || `HTTP ${result.status}`).slice(0, 200),
      ok,
      // `attempts` counts this one already (counted when claimed).
      nextAttemptAt: ok ? null : nextAttempt(delivery.attempts, done, this.d.settings.retryDelaysMs),
    });
    if (!ok) await this.disableIfFailingLong(delivery.endpointId, done);
  }

  private async disableIfFailingLong(endpointId: string, now: number): Promise<void> {
    await this.d.store.transaction(async (tx) => {
      const e = await tx.webhooks.endpoint(endpointId);
      if (!e?.enabled || e.failingSince === null || now - e.failingSince < this.d.settings.disableAfterMs) return;
      const reason = `every delivery failed since ${new Date(e.failingSince).toISOString()}: disabled by the service`;
      await tx.webhooks.updateEndpoint({ ...e, enabled: false, disabledReason: reason });
      await this.d.log.record(tx, e.accountId, [{ type: "webhook_endpoint.disabled", data: { endpointId, reason } }]);
    });
  }
}
