import { AsyncLocalStorage } from "node:async_hooks";
import type { ConversationEvent, PlacedEntries } from "../domain/log/events.js";
import type { EventRecord, EventRepository } from "../domain/log/repository.js";
import type { LogAdvanced } from "../domain/store.js";

/**
 * This process's side of "an account's event log advanced", shared by both back ends: the appends of a unit of work
 * are announced once it committed (a nested unit's with its outer one), an append outside a unit as soon as it
 * returns; a unit that rolled back announces nothing. The announcement is the only wake-up there is: no use case
 * tells watchers or dispatchers anything, so what they read cannot differ from what the log recorded.
 */
export class LogAdvances {
  private readonly unit = new AsyncLocalStorage<Appended>();
  private readonly listeners = new Set<LogAdvanced>();

  /**
   * @param place a back end whose appends take their places after the commit (PostgreSQL: sequencer.ts): run once
   *   the appends of these accounts committed, resolving once they have places; it then does the announcing (`tell`)
   *   itself, of what it placed. Without it, the appends are announced here.
   */
  constructor(private readonly place?: (accountIds: string[]) => Promise<void>) {}

  /** Runs a unit of work (its commit included) and then announces what it appended. */
  async around<T>(run: () => Promise<T>): Promise<T> {
    if (this.unit.getStore()) return run();
    const appended: Appended = { changes: [], deliveries: false, placed: undefined, records: [] };
    const result = await this.unit.run(appended, run);
    const changes = appended.placed
      ? appended.changes.filter((c) => !appended.placed?.has(c.accountId))
      : appended.changes;
    if (changes.length > 0) await this.committed(changes, appended.deliveries, appended.records);
    return result;
  }

  /**
   * The unit of work of this async context was placed with its commit, for these accounts (PostgreSQL: its placing
   * went in its COMMIT's round trip and announced what it placed): they are not placed again.
   */
  placed(accountIds: readonly string[]): void {
    const open = this.unit.getStore();
    if (open) for (const a of accountIds) (open.placed ??= new Set()).add(a);
  }

  /**
   * No unit of work is open or waiting (the store says so): the async context that collects a unit's appends is
   * off until the next unit runs, so that Node stops hooking every promise. Never called while a unit is open.
   */
  idle(): void {
    this.unit.disable();
  }

  /** The event repository `events`, announcing each append (at its unit's commit). */
  announcing(events: EventRepository): EventRepository {
    return {
      append: async (items) => {
        const records = await events.append(items);
        // A back end that places after the commit answers an append with its places, so it has already placed it
        // (outside a unit of work only), and the placing announced it: placing again would only find nothing.
        if (!this.place) await this.appended(records, items);
        return records;
      },
      add: async (items) => {
        // A back end that places at the append (SQLite) answers it with its places: the announcement carries them.
        if (this.place) await events.add(items);
        const records = this.place ? items.map((i) => i.event) : await events.append(items);
        await this.appended(records, items);
      },
      list: (accountId, afterSeq, limit, types) => events.list(accountId, afterSeq, limit, types),
      lastSeq: (accountId) => events.lastSeq(accountId),
      prune: (before, limit) => events.prune(before, limit),
    };
  }

  /** Tells every listener (undefined: anything may have changed, e.g. after announcements were lost). */
  tell(changes: readonly ConversationEvent[] | undefined, deliveries = true, placed?: PlacedEntries): void {
    for (const l of this.listeners) {
      try {
        l(changes, deliveries, placed);
      } catch {
        // A listener's fault is its own: the writer's commit stands, and other listeners are still told.
      }
    }
  }

  /** Calls `l` with every announcement; returns a function that stops it. */
  listen(l: LogAdvanced): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private async appended(
    records: readonly (Pick<EventRecord, "accountId" | "orderKey"> & { seq?: number })[],
    items: readonly { deliveries: readonly unknown[] }[],
  ): Promise<void> {
    const changes = records.map((r) => ({ accountId: r.accountId, conversationId: r.orderKey }));
    const deliveries = items.some((i) => i.deliveries.length > 0);
    const placed = this.place ? [] : (records as EventRecord[]);
    const open = this.unit.getStore();
    if (open) {
      open.changes.push(...changes);
      open.deliveries ||= deliveries;
      open.records.push(...placed);
    } else if (changes.length > 0) await this.committed(changes, deliveries, placed);
  }

  /**
   * Appends committed: placed (the placing announces them), or announced, with their entries when the back end
   * placed them at the append (`records`, SQLite), so that this process's readers need not read them back.
   */
  private async committed(
    changes: readonly ConversationEvent[],
    deliveries: boolean,
    records: readonly EventRecord[],
  ): Promise<void> {
    if (this.place) await this.place([...new Set(changes.map((c) => c.accountId))]);
    else this.tell(distinct(changes), deliveries, placedEntries(records));
  }
}

/**
 * A unit of work's appends as the entries a read of its account's log would answer (their data as stored: through
 * JSON), when they are one account's and dense; else undefined (the readers read). A back end that places at the
 * append gives dense places to one unit: no other unit appends while it runs, and its counter goes back with it.
 */
function placedEntries(records: readonly EventRecord[]): PlacedEntries | undefined {
  const first = records[0];
  if (!first) return undefined;
  for (let i = 1; i < records.length; i++)
    if (records[i]!.accountId !== first.accountId || records[i]!.seq !== first.seq + i) return undefined;
  let entries: EventRecord[] | undefined;
  return {
    accountId: first.accountId,
    firstSeq: first.seq,
    lastSeq: first.seq + records.length - 1,
    entries: () =>
      (entries ??= records.map((r) => ({ ...r, data: JSON.parse(JSON.stringify(r.data)) as EventRecord["data"] }))),
  };
}

/** What a unit of work appended so far: the logs, and whether any append recorded a webhook delivery. */
interface Appended {
  changes: ConversationEvent[];
  deliveries: boolean;
  /** The accounts whose appends were placed with the commit (LogAdvances.placed). */
  placed: Set<string> | undefined;
  /** The appends with their places, when the back end places at the append (SQLite). */
  records: EventRecord[];
}

/** Each (account, conversation) once, in first-seen order. */
export function distinct(changes: readonly ConversationEvent[]): ConversationEvent[] {
  const seen = new Set<string>();
  return changes.filter((c) => {
    const k = `${c.accountId} ${c.conversationId}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
