import { DomainError, invalidArgument } from "../errors.js";
import type { ConversationEvents, EventListener, EventTopic } from "../log/events.js";
import type { EventRecord, EventRepository } from "../log/repository.js";
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
  | { type: "message"; message: MessageRecord; cursor: string }
  | { type: "note"; note: NoteRecord; cursor: string };

/** An event of a watched account: first `subscribed`, then its conversations' events. */
export type AccountWatchEvent = { type: "subscribed"; at: number; cursor: string } | WatchEvent;

/** What a watch reads and listens to. */
export interface WatchDeps {
  events: ConversationEvents;
  history: Pick<EventRepository, "list" | "lastSeq">;
  conversations: Pick<ConversationRepository, "messages">;
}

/** Tunables of a watch (tests shorten them). */
export interface WatchTimings {
  /** A watcher reads the log at least this often even without a hint (a hint may be lost). */
  lookEveryMs: number;
  /** The store unavailable this long ends the stream with `unavailable`: the client resumes from its cursor. */
  outageMs: number;
}

export const WATCH_TIMINGS: WatchTimings = { lookEveryMs: 10_000, outageMs: 20_000 };

const PAGE = 100;
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

/**
 * The reading side of live updates. Each stream keeps its position (the conversation's message_order; the
 * account's event log place) and, on every hint and at least every `lookEveryMs`, reads from the store
 * everything after it, in order: what it sends is what the log recorded, each once, whatever the hints did.
 */
export class Watches {
  constructor(
    private readonly d: WatchDeps,
    private readonly t: WatchTimings = WATCH_TIMINGS,
  ) {}

  /**
   * The conversation's state, its messages after `after`, then each change; new internal notes only when `notes`
   * (the account's people): the customer's stream never carries one.
   */
  async *conversation(
    conv: ConversationRecord,
    summary: ConversationSummary,
    after: number,
    signal: AbortSignal,
    notes: boolean,
  ) {
    const self = this;
    // Subscribed before the log's place is taken and the messages read, so nothing committed meanwhile is missed.
    yield* this.following({ conversationId: conv.conversationId }, signal, async function* (more) {
      let seq = await self.retrying(() => self.d.history.lastSeq(conv.accountId), signal);
      let last = after;
      yield { type: "conversation", conversation: summary, cursor: String(last) } satisfies WatchEvent;
      // Messages after `to` from the conversation itself (the catch-up; a gap the log cannot fill).
      async function* read(to: number) {
        while (last < to) {
          const p = await self.retrying(
            () => self.d.conversations.messages(conv, Math.min(PAGE, to - last), last),
            signal,
          );
          for (const m of p.messages) {
            last = m.messageOrder;
            yield { type: "message", message: m, cursor: String(last) } satisfies WatchEvent;
          }
          if (!p.hasMore) return;
        }
      }
      yield* read(Number.MAX_SAFE_INTEGER);
      for (;;) {
        for (;;) {
          const page = await self.retrying(() => self.d.history.list(conv.accountId, seq, PAGE, []), signal);
          for (const e of page) {
            seq = e.seq;
            if (e.orderKey !== conv.conversationId) continue;
            const m = e.type === "message.created" ? e.data.message : undefined;
            if (m) {
              if (m.messageOrder <= last) continue;
              // The log and the conversation are written in one unit of work: a gap is only a page not read yet.
              yield* read(m.messageOrder - 1);
              last = m.messageOrder;
              yield { type: "message", message: m, cursor: String(last) } satisfies WatchEvent;
            } else if (notes && e.type === "note.created" && e.data.note)
              yield { type: "note", note: e.data.note, cursor: String(last) } satisfies WatchEvent;
            else if (STATE_TYPES.has(e.type) && e.data.conversation)
              yield {
                type: "conversation",
                conversation: e.data.conversation,
                cursor: String(last),
              } satisfies WatchEvent;
          }
          if (page.length < PAGE) break;
        }
        if (!(await more())) return;
      }
    });
  }

  /** Every change of the account's conversations after `afterCursor` (from now when empty). */
  async *account(accountId: string, at: number, afterCursor: string, signal: AbortSignal) {
    const self = this;
    yield* this.following({ accountId }, signal, async function* (more) {
      const from = afterCursor === "" ? undefined : parseCursor("after_cursor", afterCursor);
      const now = await self.retrying(() => self.d.history.lastSeq(accountId), signal);
      if (from !== undefined && from > now) throw invalidArgument("after_cursor", "is not a cursor of this account");
      let seq = from ?? now;
      yield { type: "subscribed", at, cursor: String(seq) } satisfies AccountWatchEvent;
      let first = from !== undefined && from > 0;
      for (;;) {
        for (;;) {
          const page = await self.retrying(() => self.d.history.list(accountId, seq, PAGE, []), signal);
          // A resumed watch whose next place was pruned (past the log's retention) cannot be told what it missed.
          if (first && page.length > 0 && page[0]!.seq !== seq + 1)
            throw new DomainError("failed_precondition", "after_cursor is older than the event log keeps: list again");
          first = false;
          for (const e of page) {
            seq = e.seq;
            const ev = asWatchEvent(e);
            if (ev) yield ev;
          }
          if (page.length < PAGE) break;
        }
        if (!(await more())) return;
      }
    });
  }

  /**
   * Runs `read` subscribed to the topic; `more()` waits for a hint (or `lookEveryMs`) and answers false once the
   * stream should end (aborted, or the events channel closed).
   */
  private async *following<T>(
    topic: EventTopic,
    signal: AbortSignal,
    read: (more: () => Promise<boolean>) => AsyncGenerator<T>,
  ): AsyncGenerator<T> {
    const hints = new Hints(signal);
    const unsubscribe = this.d.events.subscribe(topic, hints);
    try {
      yield* read(async () => {
        await hints.wait(this.t.lookEveryMs);
        return !hints.ended;
      });
    } finally {
      unsubscribe();
      hints.dispose();
    }
  }

  /** Runs a read again while the store is unavailable, up to the outage bound; then ends the stream, typed. */
  private async retrying<T>(read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const start = Date.now();
    let pause = 100;
    for (;;) {
      try {
        return await read();
      } catch (e) {
        if (e instanceof DomainError && e.kind !== "unavailable") throw e;
        if (signal.aborted || Date.now() - start + pause > this.t.outageMs)
          throw new DomainError("unavailable", "live updates are unavailable: watch again from the last cursor", {
            cause: e,
          });
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 2000);
      }
    }
  }
}

/** An account watch's event of a log entry; undefined for entries watchers do not see. */
function asWatchEvent(e: EventRecord): WatchEvent | undefined {
  const cursor = String(e.seq);
  if (e.type === "message.created" && e.data.message) return { type: "message", message: e.data.message, cursor };
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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The hints of one subscription, kept as one flag: any number of them means "read again". */
class Hints implements EventListener {
  private dirty = false;
  ended = false;
  private wake: (() => void) | undefined;
  private readonly onAbort = () => this.closed();

  constructor(private readonly signal: AbortSignal) {
    if (signal.aborted) this.ended = true;
    else signal.addEventListener("abort", this.onAbort, { once: true });
  }

  changed(): void {
    this.dirty = true;
    this.wake?.();
  }

  closed(): void {
    this.ended = true;
    this.wake?.();
  }

  /** Waits for a hint, the end, or `ms`; answers whether a hint came (and takes it). */
  async wait(ms: number): Promise<boolean> {
    if (!this.dirty && !this.ended)
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, ms);
        const self = this;
        function done() {
          clearTimeout(t);
          self.wake = undefined;
          resolve();
        }
        this.wake = done;
      });
    const hinted = this.dirty;
    this.dirty = false;
    return hinted;
  }

  dispose(): void {
    this.signal.removeEventListener("abort", this.onAbort);
  }
}

export type { EventTopic };
