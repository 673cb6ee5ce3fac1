import type { AccountCaller } from "../caller.js";
import { notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import { mayAccess } from "./owners.js";
import type {
  ActivityKind,
  ActivityRecord,
  ActivityRepository,
  ConversationRepository,
  TimerRepository,
} from "./repository.js";

/** The lines that send a conversation to the team, which starts its first-response SLA clock (timers.ts). */
export const STARTS_SLA: ReadonlySet<ActivityKind> = new Set<ActivityKind>(["handed_over", "taken_over", "assigned"]);

/** Lines a timeline lists at most (the latest ones). */
export const MAX_ACTIVITY = 500;

/** Who a person is on a timeline: their display name, else the e-mail's local part. */
export type NameOf = (accountId: string, email: string) => Promise<string>;

/** The display name of a person ("AI agent" for the agent, "" for nobody). */
export async function nameFor(nameOf: NameOf | undefined, accountId: string, email: string): Promise<string> {
  if (email === "") return "";
  if (email === "ai_agent") return "AI agent";
  return (await nameOf?.(accountId, email)) || email.slice(0, Math.max(0, email.lastIndexOf("@"))) || email;
}

/**
 * Records one timeline line in the open unit of work `tx`, with its `conversation.activity` event (the event log,
 * webhooks): beside the change's own event, whose payload is unchanged. A line that sends the conversation to the
 * team starts its first-response SLA clock (when its chatbot has an SLA and no clock ran for it yet).
 */
export async function recordActivity(
  tx: LogTx & { activities: ActivityRepository; timers: Pick<TimerRepository, "startSla"> },
  log: EventLog,
  a: Omit<ActivityRecord, "activityId">,
): Promise<ActivityRecord> {
  const activity: ActivityRecord = { activityId: newId(), ...a };
  await tx.activities.add(activity);
  if (STARTS_SLA.has(a.kind)) await tx.timers.startSla(a.conversationId, a.createdAt);
  await log.record(tx, a.accountId, [
    { type: "conversation.activity", data: { conversationId: a.conversationId, activity } },
  ]);
  return activity;
}

/** Reads a conversation's timeline for the account's people. */
export class ConversationActivity {
  constructor(
    private readonly d: {
      conversations: Pick<ConversationRepository, "byId">;
      activities: Pick<ActivityRepository, "forConversation">;
    },
  ) {}

  async list(caller: AccountCaller, conversationId: string): Promise<ActivityRecord[]> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    // Another account's conversation answers exactly as one that does not exist.
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    return this.d.activities.forConversation(id, MAX_ACTIVITY);
  }
}
