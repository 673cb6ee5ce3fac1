import type { ConversationEvent } from "../../domain/log/events.js";
import type { LogAdvanced } from "../../domain/store.js";
import { PgListener } from "./listen.js";

/** The channel every instance LISTENs on for appends to event logs made by the others. */
export const LOG_CHANNEL = "aiagent_log_advanced";

/** More conversations than this in one append are announced as "anything of the account" (NOTIFY's 8000 bytes). */
export const MAX_IDS = 100;

/**
 * What goes over the channel (built by the placing statement, sequencer.ts): who placed (an instance ignores its
 * own), in which account's log, for which conversations.
 */
interface Wire {
  from: string;
  a: string;
  /** The conversations ("" for the account's own events); absent or null when too many to list. */
  c?: string[];
  /** 0 when the append recorded no webhook delivery; absent (an older instance's payload) reads as "it may have". */
  d?: 0 | 1;
}

/**
 * Hears the appends of other processes: the transaction that gives them their places sends its NOTIFY itself
 * (sequencer.ts), so one is heard only once they can be read. A payload that cannot be read, or a reconnect (notifications meanwhile are lost),
 * tells `advanced` that anything may have changed.
 */
export async function listenForLogs(url: string, self: string, advanced: LogAdvanced): Promise<() => void> {
  const listener = new PgListener(url, LOG_CHANNEL, (payload) => {
    const heard = payload === undefined ? undefined : parse(payload, self);
    if (heard !== null) advanced(heard?.changes, heard?.deliveries ?? true);
  });
  await listener.start();
  return () => listener.close();
}

/**
 * The changes a payload announces (undefined: anything may have) and whether it may have recorded deliveries;
 * undefined when nothing can be read of it; null for this process's own.
 */
function parse(
  payload: string,
  self: string,
): { changes: ConversationEvent[] | undefined; deliveries: boolean } | undefined | null {
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
  return { changes, deliveries };
}
