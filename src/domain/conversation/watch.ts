import { invalidArgument } from "../errors.js";
import {
  AccountLogs,
  type FollowOptions,
  LOG_TIMINGS,
  type LogFollower,
  type LogTimings,
  PAGE,
} from "../log/account-logs.js";
import type { ConversationEvents, EventTopic } from "../log/events.js";
import type { EventRecord, EventRepository } from "../log/repository.js";
import { type BatchSource, batches, batchesOf, LATER } from "../streams.js";
import type {
  ConversationRecord,
  ConversationRepository,
  ConversationSummary,
  MessageRecord,
  NoteRecord,
} from "./repository.js";

/** An event of a watched conversation; `cursor` resumes the watch right after it. */
export type WatchEvent =
  | { type: "conversation"; conversation: ConversationSummary; cursor: string }
  /** `live`: from the account's log, the same record for every stream it reaches (else a catch-up page's). */
  | { type: "message"; message: MessageRecord; cursor: string; live?: boolean }
  | { type: "note"; note: NoteRecord; cursor: string };

/** An event of a watched account: first `subscribed`, then its conversations' events. */
export type AccountWatchEvent = { type: "subscribed"; at: number; cursor: string } | WatchEvent;

/** What a watch reads and listens to. */
export interface WatchDeps {
  events: ConversationEvents;
  history: Pick<EventRepository, "list" | "lastSeq">;
  conversations: Pick<ConversationRepository, "messages">;
  /** The instance's shared readers of the accounts' logs (made from `events` and `history` when not given). */
  logs?: AccountLogs | undefined;
}

/** Tunables of a watch (tests shorten them). */
export type WatchTimings = LogTimings;

export const WATCH_TIMINGS: WatchTimings = LOG_TIMINGS;

const MAX_CURSOR = 2 ** 31;

/** The event log types a watcher sees, and as what. */
const STATE_TYPES = new Set([
  "conversation.assigned",
  "conversation.closed",
  "conversation.reopened",
  "conversation.read",
  "conversation.unread",
  "conversation.rated",
]);

/** The message a log entry created, if it created one. */
const messageOf = (e: EventRecord) => (e.type === "message.created" ? e.data.message : undefined);

/** Whether a watcher sees the entry: messages, state changes, and internal notes only when `notes`. */
const watched = (e: EventRecord, notes: boolean): boolean =>
  e.type === "message.created" || STATE_TYPES.has(e.type) || (notes && e.type === "note.created");

/**
 * The reading side of live updates. Each stream keeps its position (the conversation's message_order; the
 * account's event log place) and follows its account's log through the instance's one shared reader of it
 * (account-logs.ts): each new page of the log is read once for all the account's streams, and each stream takes
 * what it may see after its own position, in order: what it sends is what the log recorded, each once, whatever
 * the hints did. A stream behind the reader (resumed, or too slow for its bounded queue) reads the store itself,
 * page by page, until it is current.
 */
export class Watches {
  readonly logs: AccountLogs;

  constructor(
    private readonly d: WatchDeps,
    t: WatchTimings = WATCH_TIMINGS,
  ) {
    this.logs =
      d.logs ??
      new AccountLogs(
        {
          feed: { subscribe: (topic, l) => d.events.subscribe(topic, l), onAccounts: () => () => undefined },
          history: d.history,
        },
        t,
      );
  }

  /**
   * The conversation's state, its messages after `after`, then each change; new internal notes only when `notes`
   * (the account's people): the customer's stream never carries one. Read in batches (a page of the conversation,
   * what the log handed since the last look): see domain/streams.ts.
   */
  conversation(
    conv: ConversationRecord,
    summary: ConversationSummary,
    after: number,
    signal: AbortSignal,
    notes: boolean,
  ): AsyncIterableIterator<WatchEvent> {
    return batchesOf(new ConversationWatch(this.logs, this.d, conv, summary, after, signal, notes));
  }

  /** Every change of the account's conversations after `afterCursor` (from now when empty). */
  account(
    accountId: string,
    at: number,
    afterCursor: string,
    signal: AbortSignal,
  ): AsyncIterableIterator<AccountWatchEvent> {
    let f: LogFollower | undefined;
    const fill = async (): Promise<AccountWatchEvent[] | undefined> => {
      if (!f) {
        const from = afterCursor === "" ? undefined : parseCursor("after_cursor", afterCursor);
        // The account's watch is for its people only (ID token): it carries their notes.
        f = await this.logs.follow(accountId, { accepts: (e) => watched(e, true), strict: true }, signal);
        const now = await this.logs.retrying(() => this.d.history.lastSeq(accountId), signal);
        if (from !== undefined && from > now) throw invalidArgument("after_cursor", "is not a cursor of this account");
        const seq = from ?? now;
        f.start(seq);
        return [{ type: "subscribed", at, cursor: String(seq) }];
      }
      const entries = await f.next();
      if (!entries) return undefined;
      const out: AccountWatchEvent[] = [];
      for (const e of entries) {
        const ev = asWatchEvent(e);
        if (ev) out.push(ev);
      }
      return out;
    };
    return batches(fill, () => f?.close(), { ready: (cb) => (f ? f.whenReady(cb) : cb()), fillNow: () => LATER });
  }
}

/**
 * One watched conversation: its state, its messages after `after` from the conversation itself, then the log's entries,
 * live (read in batches: domain/streams.ts). One object for the stream's life, not a set of closures: an idle stream
 * keeps it all along (docs/live-updates.md, session 22). It is its follower's options too (`conversationId`, `accepts`).
 */
class ConversationWatch implements BatchSource<WatchEvent>, FollowOptions {
  readonly conversationId: string;
  private last: number;
  private f: LogFollower | undefined;
  /** 0: the state; 1: the messages after `after`, from the conversation itself; 2: the log's entries, live. */
  private phase = 0;
  /** Entries taken at once that need a page read first (a gap): the next `fill` takes them. */
  private held: EventRecord[] | undefined;
  /** Sent first, then dropped. */
  private summary: ConversationSummary | undefined;

  constructor(
    private readonly logs: AccountLogs,
    private readonly d: WatchDeps,
    private readonly conv: ConversationRecord,
    summary: ConversationSummary,
    after: number,
    private readonly signal: AbortSignal,
    private readonly notes: boolean,
  ) {
    this.conversationId = conv.conversationId;
    this.summary = summary;
    this.last = after;
  }

  accepts(e: EventRecord): boolean {
    return e.orderKey === this.conversationId && watched(e, this.notes);
  }

  async fill(): Promise<WatchEvent[] | undefined> {
    // The state first (read with the access check): a resumed stream answers at once, then catches up.
    if (this.phase === 0) {
      this.phase = 1;
      const conversation = this.summary!;
      this.summary = undefined;
      return [{ type: "conversation", conversation, cursor: String(this.last) }];
    }
    const out: WatchEvent[] = [];
    if (this.phase === 1) {
      if (!this.f) {
        const accountId = this.conv.accountId;
        // Following before the log's place is taken and the messages read, so nothing committed meanwhile is missed.
        const f = await this.logs.follow(accountId, this, this.signal);
        this.f = f;
        f.start(await this.logs.retrying(() => this.d.history.lastSeq(accountId), this.signal));
      }
      // The catch-up, a page at a time (a gap the log cannot fill).
      if (!(await this.page(Number.MAX_SAFE_INTEGER, out))) this.phase = 2;
      return out;
    }
    const entries = this.held ?? (await this.f!.next());
    this.held = undefined;
    if (!entries) return undefined;
    for (const e of entries) {
      const m = messageOf(e);
      // The log and the conversation are written in one unit of work: a gap is only a page not read yet.
      if (m) while (this.last < m.messageOrder - 1 && (await this.page(m.messageOrder - 1, out)));
      this.add(e, out);
    }
    return out;
  }

  close(): void {
    this.f?.close();
  }

  /** Live and caught up, the stream waits on its follower's callback and takes its entries at once (streams.ts). */
  ready(cb: () => void): void {
    if (this.phase === 2 && !this.held) this.f!.whenReady(cb);
    else cb();
  }

  fillNow(): WatchEvent[] | undefined | typeof LATER {
    if (this.phase !== 2 || this.held) return LATER;
    const entries = this.f!.takeNow();
    if (entries === LATER || !entries) return entries;
    if (this.gapIn(entries)) {
      this.held = entries;
      return LATER;
    }
    const out: WatchEvent[] = [];
    for (const e of entries) this.add(e, out);
    return out;
  }

  /** One page of the messages after `last`, at most up to `to`, from the conversation itself; true when it has more. */
  private async page(to: number, out: WatchEvent[]): Promise<boolean> {
    const p = await this.logs.retrying(
      () => this.d.conversations.messages(this.conv, Math.min(PAGE, to - this.last), this.last),
      this.signal,
    );
    for (const m of p.messages) {
      this.last = m.messageOrder;
      out.push({ type: "message", message: m, cursor: String(this.last) });
    }
    return p.hasMore;
  }

  /** A log entry as the stream's event, if it has one (a message sent already has none); moves `last`. */
  private add(e: EventRecord, out: WatchEvent[]): void {
    const m = messageOf(e);
    if (m) {
      if (m.messageOrder <= this.last) return;
      this.last = m.messageOrder;
      out.push({ type: "message", message: m, cursor: String(this.last), live: true });
    } else if (this.notes && e.type === "note.created" && e.data.note)
      out.push({ type: "note", note: e.data.note, cursor: String(this.last) });
    else if (STATE_TYPES.has(e.type) && e.data.conversation)
      out.push({ type: "conversation", conversation: e.data.conversation, cursor: String(this.last) });
  }

  /** Whether a message of `entries` does not follow the one before it (a page to read from the conversation first). */
  private gapIn(entries: readonly EventRecord[]): boolean {
    let l = this.last;
    for (const e of entries) {
      const m = messageOf(e);
      if (!m || m.messageOrder <= l) continue;
      if (l < m.messageOrder - 1) return true;
      l = m.messageOrder;
    }
    return false;
  }
}

/** An account watch's event of a log entry; undefined for entries watchers do not see. */
function asWatchEvent(e: EventRecord): WatchEvent | undefined {
  const cursor = String(e.seq);
  if (e.type === "message.created" && e.data.message)
    return { type: "message", message: e.data.message, cursor, live: true };
  if (STATE_TYPES.has(e.type) && e.data.conversation)
    return { type: "conversation", conversation: e.data.conversation, cursor };
  // The account's watch is for its people only (ID token): it carries their notes.
  if (e.type === "note.created" && e.data.note) return { type: "note", note: e.data.note, cursor };
  return undefined;
}

/** A cursor as sent back by a client: a decimal place, 0 or more. */
export function parseCursor(field: string, cursor: string): number {
  if (!/^\d{1,10}$/.test(cursor) || Number(cursor) >= MAX_CURSOR)
    throw invalidArgument(field, "must be a cursor this service sent (digits)");
  return Number(cursor);
}

export type { EventTopic };
