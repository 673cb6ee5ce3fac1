import type { ConversationEvent, PlacedEntries } from "../../domain/log/events.js";
import type { EventRecord } from "../../domain/log/repository.js";
import type { LogAdvanced } from "../../domain/store.js";
import { toEvent } from "../webhook-rows.js";
import { PgListener } from "./listen.js";

/** The channel every instance LISTENs on for appends to event logs made by the others. */
export const LOG_CHANNEL = "aiagent_log_advanced";

/** More conversations than this in one append are announced as "anything of the account" (NOTIFY's 8000 bytes). */
export const MAX_IDS = 100;

/** The longest announcement that carries the placed entries (NOTIFY refuses a payload of 8000 bytes or more). */
export const MAX_PAYLOAD = 7900;

/**
 * What goes over the channel (built by the placing statement, sequencer.ts): who placed (an instance ignores its
 * own), in which account's log, for which conversations, and the entries placed when they fit.
 */
interface Wire {
  from: string;
  a: string;
  /** The conversations ("" for the account's own events); absent or null when too many to list. */
  c?: string[];
  /** 0 when the append recorded no webhook delivery; absent (an older instance's payload) reads as "it may have". */
  d?: 0 | 1;
  /**
   * The entries placed, in place order from place `s`: order keys, ids, types, data (the stored JSON text) and
   * times; absent when the announcement would not fit with them (or from an older instance).
   */
  p?: { s: number; k: string[]; i: string[]; t: string[]; x: string[]; m: number[] };
}

/**
 * Hears the appends of other processes: the transaction that gives them their places sends its NOTIFY itself
 * (sequencer.ts), so one is heard only once they can be read. A payload that cannot be read, or a reconnect (notifications meanwhile are lost),
 * tells `advanced` that anything may have changed. The entries a payload carries reach the account's readers as
 * this process's own placings do (PlacedEntries): a reader just before them hands them on without reading them.
 */
export async function listenForLogs(url: string, self: string, advanced: LogAdvanced): Promise<() => void> {
  // This process's own announcements come back too: told apart by their first bytes (the placing's json_build_object
  // writes "from" first), they are not parsed, entries and all, only to be dropped; any other form is parsed.
  const own = `{"from" : ${JSON.stringify(self)},`;
  const listener = new PgListener(url, LOG_CHANNEL, (payload) => {
    if (payload?.startsWith(own)) return;
    const heard = payload === undefined ? undefined : parse(payload, self);
    if (heard !== null) advanced(heard?.changes, heard?.deliveries ?? true, heard?.placed);
  });
  await listener.start();
  return () => listener.close();
}

/**
 * The changes a payload announces (undefined: anything may have), whether it may have recorded deliveries and the
 * entries it carries; undefined when nothing can be read of it; null for this process's own.
 */
function parse(
  payload: string,
  self: string,
): { changes: ConversationEvent[] | undefined; deliveries: boolean; placed?: PlacedEntries } | undefined | null {
  let wire: Partial<Wire>;
  try {
    wire = JSON.parse(payload) as Partial<Wire>;
  } catch {
    return undefined;
  }
  if (wire.from === self) return null;
  const deliveries = wire.d !== 0;
  if (typeof wire.a !== "string" || !Array.isArray(wire.c)) return { changes: undefined, deliveries };
  const accountId = wire.a;
  const changes = wire.c
    .filter((c): c is string => typeof c === "string")
    .map((conversationId) => ({ accountId, conversationId }));
  return { changes, deliveries, placed: placedOf(accountId, wire.p) };
}

/** The entries of a payload, when it carries them whole (anything else: the readers read the log, as on a hint). */
function placedOf(accountId: string, p: Wire["p"] | undefined): PlacedEntries | undefined {
  if (typeof p !== "object" || p === null || !Number.isSafeInteger(p.s) || !Array.isArray(p.k)) return undefined;
  const n = p.k.length;
  if (n === 0 || [p.i, p.t, p.x, p.m].some((a) => !Array.isArray(a) || a.length !== n)) return undefined;
  return placedEntries(accountId, p.s, { keys: p.k, ids: p.i, kinds: p.t, datas: p.x, times: p.m });
}

/**
 * The entries of one placing from its columns in place order (the placing's answer, or an announcement's `p`), from
 * place `firstSeq` on; made into records on the first call.
 */
export function placedEntries(
  accountId: string,
  firstSeq: number,
  c: { keys: string[]; ids: string[]; kinds: string[]; datas: string[]; times: (string | number)[] },
): PlacedEntries {
  let entries: EventRecord[] | undefined;
  return {
    accountId,
    firstSeq,
    lastSeq: firstSeq + c.keys.length - 1,
    entries: () =>
      (entries ??= c.keys.map((orderKey, i) =>
        toEvent({
          seq: firstSeq + i,
          event_id: c.ids[i],
          account_id: accountId,
          type: c.kinds[i],
          order_key: orderKey,
          data: c.datas[i],
          created_at: c.times[i],
        }),
      )),
  };
}
