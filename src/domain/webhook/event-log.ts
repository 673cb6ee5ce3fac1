import type { Clock } from "../clock.js";
import { newId } from "../ids.js";
import type { Repositories } from "../store.js";
import type { EventData, EventType } from "./repository.js";

/** How long after recording a delivery a commit still wakes the dispatcher (far beyond any unit's duration). */
const DELIVERIES_LATELY_MS = 60_000;

/** An event as its writer describes it. */
export interface EventInput {
  type: EventType;
  data: EventData;
}

/**
 * The outbox: events are recorded inside the unit of work of the change they describe, with a delivery for each
 * enabled endpoint of the account that wants them, so an event (and its deliveries) exists exactly when its change
 * was committed. `committed()` then wakes the dispatcher, while this process records deliveries at all.
 */
export class EventLog {
  private readonly listeners = new Set<() => void>();
  /** When this process last recorded a delivery (performance.now()). */
  private deliveriesAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly clock: Clock) {}

  /** Records the account's events in the open unit of work `tx`, in the order given. */
  async record(
    tx: Pick<Repositories, "events" | "webhooks">,
    accountId: string,
    events: readonly EventInput[],
  ): Promise<void> {
    if (events.length === 0) return;
    const endpoints = (await tx.webhooks.endpoints(accountId)).filter((e) => e.enabled);
    const now = this.clock.now();
    if (endpoints.length > 0) this.deliveriesAt = performance.now();
    // Nothing here waits for the places: a back end may send the append with the unit's commit.
    await tx.events.add(
      events.map((e) => ({
        event: {
          eventId: newId(),
          accountId,
          type: e.type,
          orderKey: e.data.conversationId ?? "",
          data: e.data,
          createdAt: now,
        },
        deliveries: endpoints
          .filter((x) => x.eventTypes.length === 0 || x.eventTypes.includes(e.type))
          .map((x) => ({ deliveryId: newId(), endpointId: x.endpointId })),
      })),
    );
  }

  /**
   * Tells the dispatchers of this process that new deliveries may be due (call after the commit). Without a delivery
   * recorded lately there is nothing new to claim, and the wake (a claim statement per commit) is skipped: a unit
   * commits within seconds of recording, and the dispatcher's poll finds anything else.
   */
  committed(): void {
    if (performance.now() - this.deliveriesAt > DELIVERIES_LATELY_MS) return;
    for (const l of this.listeners) l();
  }

  /** Calls `l` after each commit that recorded events; returns a function that stops it. */
  onCommitted(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
