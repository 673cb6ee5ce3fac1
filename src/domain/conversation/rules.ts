/** The conversation rules, in one place: every back end stores what these decide and computes none of it. */

/** assigned_to while the AI agent answers. */
export const AI_AGENT = "ai_agent";

/** A new conversation: live, answered by the AI agent. */
export const NEW_CONVERSATION = { status: "live", assignedTo: AI_AGENT } as const;

/** What storing a message does to its conversation. */
export interface MessageEffect {
  /** The message counts as unread for the account (only the customer's do). */
  unread: boolean;
  /** The message makes a closed conversation live again (the customer writing reopens it, decisions §5). */
  reopens: boolean;
}

/** The effect of a message by its author. */
export function messageEffect(role: "user" | "assistant" | "operator"): MessageEffect {
  const fromCustomer = role === "user";
  return { unread: fromCustomer, reopens: fromCustomer };
}

/**
 * The status a reader sees: a live conversation with no message for longer than the idle limit reads as closed
 * (idle close); a new customer message reopens it. `liveSince` is now minus the idle limit.
 */
export function effectiveStatus(
  stored: "live" | "closed" | null,
  lastActivityAt: number | null,
  liveSince: number,
): "live" | "closed" {
  return stored === "live" && (lastActivityAt ?? 0) >= liveSince ? "live" : "closed";
}

/** How urgent a conversation is, as Chatwoot's and Intercom's inboxes rank them. */
export const PRIORITIES = ["none", "low", "medium", "high", "urgent"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** How a stored state reads: a pending clock answered in time is met at once, not when the check passes. */
export function slaStatus(t: TimerState | undefined): SlaStatus {
  if (!t?.slaStatus || t.slaDueAt === null) return "none";
  if (t.slaStatus === "pending" && t.firstOperatorAt !== null && t.firstOperatorAt <= t.slaDueAt) return "met";
  return t.slaStatus;
}

/** A conversation's first-response SLA as readers see it (none: no clock runs for it). */
export type SlaStatus = "none" | "pending" | "met" | "breached" | "cancelled";

/** A conversation's snooze and SLA clock, as stored. */
export interface TimerState {
  /** Until when it is snoozed (null: it is not). */
  snoozedUntil: number | null;
  /** When a person's first reply is due (null: no clock). */
  slaDueAt: number | null;
  /** The clock's stored state (null: no clock). A pending clock whose reply came in time reads met (slaStatus). */
  slaStatus: Exclude<SlaStatus, "none"> | null;
  /** The first operator message's instant (null: none yet). */
  firstOperatorAt: number | null;
}
