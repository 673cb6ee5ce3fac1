import type { ActivityRecord, ConversationSummary, MessageRecord, NoteRecord } from "../conversation/repository.js";
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

/** A delivery to create with its event. */
export interface NewDelivery {
  deliveryId: string;
  endpointId: string;
}

/** The account's event log; written only inside the unit of work of the change an event describes. */
export interface EventRepository {
  /**
   * Appends events to their account's log after its last (one account per call), each with the deliveries given
   * for it; answers them with their places. Outside a unit of work only: a back end may give places after the
   * commit (PostgreSQL does), so in a unit there are none to answer yet (use `add`).
   */
  append(events: { event: NewEvent; deliveries: NewDelivery[] }[]): Promise<EventRecord[]>;
  /**
   * Appends like `append`, answering nothing: in a unit of work a back end may send it with the unit's next statement
   * or its commit (one round trip fewer); a failure fails the unit. The events are readable (have their places)
   * when the unit of work returns, not before: the unit itself may not see them.
   */
  add(events: { event: NewEvent; deliveries: NewDelivery[] }[]): Promise<void>;
  /** Events of the account after `afterSeq`, in log order, of the given types (empty: all). */
  list(accountId: string, afterSeq: number, limit: number, types: readonly string[]): Promise<EventRecord[]>;
  /** The place of the account's last committed event; 0 before its first. */
  lastSeq(accountId: string): Promise<number>;
  /** Drops up to `limit` events older than `before` (with their deliveries), none still pending; answers the count. */
  prune(before: number, limit: number): Promise<number>;
}

/** Where the log finds who wants an account's events (the webhook endpoints: webhook/repository.ts stores them). */
export interface Subscribers {
  /** The account's endpoints, oldest first. */
  endpoints(accountId: string): Promise<{ endpointId: string; enabled: boolean; eventTypes: string[] }[]>;
}
