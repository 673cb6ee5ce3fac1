import type { Clock } from "../clock.js";
import { newId } from "../ids.js";
import type { EventData, EventRepository, EventType, Subscribers } from "./repository.js";

/** What recording events writes to: the log, and the deliveries of the endpoints that want them. */
export interface LogTx {
  events: EventRepository;
  /** Who wants the account's events (the webhook endpoints): each enabled one gets a delivery of each. */
  webhooks: Subscribers;
}

/** An event as its writer describes it. */
export interface EventInput {
  type: EventType;
  data: EventData;
}

/**
 * The outbox: events are recorded inside the unit of work of the change they describe, with a delivery for each
 * enabled endpoint of the account that wants them, so an event (and its deliveries) exists exactly when its change
 * was committed. The store announces each append after its commit (Store.onLogAdvanced): that wakes the
 * dispatchers and the watchers of every instance, so no writer tells anyone by hand.
 */
export class EventLog {
  constructor(private readonly clock: Clock) {}

  /** Records the account's events in the open unit of work `tx`, in the order given. */
  async record(tx: LogTx, accountId: string, events: readonly EventInput[]): Promise<void> {
    if (events.length === 0) return;
    const endpoints = (await tx.webhooks.endpoints(accountId)).filter((e) => e.enabled);
    const now = this.clock.now();
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
}
