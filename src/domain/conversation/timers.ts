import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument, notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import { isoTime } from "../time.js";
import type { Transact } from "../unit.js";
import { type NameOf, nameFor, recordActivity } from "./activity.js";
import type {
  ActivityKind,
  ActivityRecord,
  ActivityRepository,
  ConversationRecord,
  ConversationRepository,
  TimerRepository,
  TimerState,
} from "./repository.js";

export type { DueTimer, SlaStatus, TimerRepository, TimerState } from "./repository.js";

/** The furthest a snooze may reach: a year and a day. */
export const MAX_SNOOZE_MS = 366 * 86_400_000;

/** What the unit of work of a snooze, a waking or a breach writes. */
export interface TimerTx extends LogTx {
  timers: TimerRepository;
  activities: ActivityRepository;
  conversations: Pick<ConversationRepository, "byId">;
}

/** A conversation that missed its first-response SLA, as its alert needs it. */
export interface SlaBreach {
  conversation: ConversationRecord;
  dueAt: number;
  at: number;
}

export interface ConversationTimersDeps<R extends TimerTx> {
  clock: Clock;
  log: EventLog;
  transaction: Transact<R>;
  /** Read outside units of work: what is due, and a conversation's owner. */
  timers: Pick<TimerRepository, "dueSnoozes" | "dueSlas" | "states">;
  conversations: Pick<ConversationRepository, "byId">;
  nameOf?: NameOf;
  /** How often the due snoozes and clocks are looked for. */
  pollMs: number;
  /** Writes what goes with a breach in its unit of work (the alert e-mails); undefined: nothing. */
  onBreach?: (tx: R, breach: SlaBreach) => Promise<void>;
  /** After a unit that queued alerts committed (the mail sender looks at once). */
  afterBreach?: () => void;
  warn(what: string, fields: Record<string, unknown>): void;
}

const BATCH = 100;

/**
 * Snoozes and first-response SLA clocks. The state is in the store, so the periodic check that wakes snoozes and
 * settles clocks resumes after a restart on whichever instance runs; each waking and each breach is claimed by one
 * guarded update, so two instances checking at once record it once.
 */
export class ConversationTimers<R extends TimerTx> {
  private timer: NodeJS.Timeout | undefined;
  private tail: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly d: ConversationTimersDeps<R>) {}

  start(): void {
    if (this.closed || this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => undefined), this.d.pollMs);
    this.timer.unref();
    void this.check().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.tail;
  }

  /** Wakes the due snoozes and settles the due clocks now, after any check under way (tests, and the interval). */
  check(): Promise<void> {
    const run = this.tail.then(async () => {
      try {
        await this.wakeDue();
        await this.settleDue();
      } catch (e) {
        this.d.warn("timers: the due snoozes and SLA clocks could not be checked", { error: (e as Error).message });
        throw e;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** The timers of a conversation of the caller's account (another account's answers as an unknown one). */
  async of(caller: AccountCaller, conversationId: string): Promise<TimerState | undefined> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (!conv || conv.accountId !== caller.accountId) throw notFound("conversation");
    return (await this.d.timers.states([id])).get(id);
  }

  /**
   * Snoozes the conversation until `until` (ISO 8601 with a zone, in the future, within MAX_SNOOZE_MS), or wakes
   * it ("" ): a change is a `snoozed` or `unsnoozed` line of its timeline and a conversation.activity event.
   */
  async snooze(caller: AccountCaller, conversationId: string, until: string): Promise<number | null> {
    const id = requireUuid("conversation_id", conversationId);
    const now = this.d.clock.now();
    const at = until === "" ? null : parseUntil(until, now);
    const conv = await this.d.conversations.byId(id);
    if (!conv || conv.accountId !== caller.accountId) throw notFound("conversation");
    const actorName = await nameFor(this.d.nameOf, caller.accountId, caller.email);
    return this.d.transaction(async (tx) => {
      const before = await tx.timers.setSnooze(id, at);
      if (before === at) return at;
      await this.line(tx, conv, at === null ? "unsnoozed" : "snoozed", at === null ? "person" : isoTime(at), {
        email: caller.email,
        name: actorName,
      });
      return at;
    });
  }

  private async line(
    tx: R,
    conv: ConversationRecord,
    kind: ActivityKind,
    detail: string,
    actor: { email: string; name: string },
  ): Promise<ActivityRecord> {
    return recordActivity(tx, this.d.log, {
      accountId: conv.accountId,
      conversationId: conv.conversationId,
      kind,
      actorEmail: actor.email,
      actorName: actor.name,
      fromEmail: "",
      fromName: "",
      toEmail: "",
      toName: "",
      detail,
      createdAt: this.d.clock.now(),
    });
  }

  private async wakeDue(): Promise<void> {
    for (;;) {
      const due = await this.d.timers.dueSnoozes(this.d.clock.now(), BATCH);
      for (const t of due) {
        if (this.closed) return;
        await this.d.transaction(async (tx) => {
          if (!(await tx.timers.wake(t.conversationId, t.at))) return;
          const conv = await tx.conversations.byId(t.conversationId);
          if (conv) await this.line(tx, conv, "unsnoozed", "time", { email: "", name: "" });
        });
      }
      if (due.length < BATCH) return;
    }
  }

  private async settleDue(): Promise<void> {
    let alerted = false;
    for (;;) {
      const now = this.d.clock.now();
      const due = await this.d.timers.dueSlas(now, BATCH);
      for (const t of due) {
        if (this.closed) break;
        alerted =
          (await this.d.transaction(async (tx) => {
            const outcome = await tx.timers.settleSla(t.conversationId, now);
            if (outcome !== "breached") return false;
            const conv = await tx.conversations.byId(t.conversationId);
            if (!conv) return false;
            const at = this.d.clock.now();
            const activity = await this.line(tx, conv, "sla_breached", isoTime(t.at), { email: "", name: "" });
            await this.d.log.record(tx, conv.accountId, [
              {
                type: "conversation.sla_breached",
                data: { conversationId: conv.conversationId, chatbotId: conv.chatbotId, activity },
              },
            ]);
            await this.d.onBreach?.(tx, { conversation: conv, dueAt: t.at, at });
            return true;
          })) || alerted;
      }
      if (due.length < BATCH || this.closed) break;
    }
    if (alerted) this.d.afterBreach?.();
  }
}

/** A snooze's end as given: an ISO 8601 instant with its zone, after now and within MAX_SNOOZE_MS. */
function parseUntil(v: string, now: number): number {
  const field = "snoozed_until";
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(v))
    throw invalidArgument(field, "must be an ISO 8601 time with its zone, like 2026-12-01T09:00:00Z");
  const t = Date.parse(v);
  if (!Number.isFinite(t)) throw invalidArgument(field, "must be a real time");
  if (t <= now) throw invalidArgument(field, "must be in the future");
  if (t > now + MAX_SNOOZE_MS) throw invalidArgument(field, "must be at most 366 days ahead");
  return t;
}
