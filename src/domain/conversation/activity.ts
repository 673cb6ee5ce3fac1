import type { AccountCaller } from "../caller.js";
import { notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import type { Repositories } from "../store.js";
import type { EventLog } from "../webhook/event-log.js";
import type { ConversationRepository } from "./repository.js";

/** What happened to a conversation, as its timeline says it. */
export const ACTIVITY_KINDS = [
  /** A person gave it to a teammate (or to themselves from a colleague: see taken_over). */
  "assigned",
  /** A person took it: from the AI agent or from a colleague (`from_*`). */
  "taken_over",
  /** Handed back to the AI agent. */
  "released",
  "closed",
  "reopened",
  /** The AI agent handed it to the team, with its reason (`detail`). */
  "handed_over",
  /** The customer rated it (`detail`: the score, then the comment). */
  "rated",
] as const;

export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** One line of a conversation's timeline: who did what, by e-mail and by the display name they had then. */
export interface ActivityRecord {
  activityId: string;
  accountId: string;
  conversationId: string;
  kind: ActivityKind;
  /** Who did it: a person's e-mail; "" for the customer or the AI agent. */
  actorEmail: string;
  actorName: string;
  /** Who held it before ("ai_agent" for the AI agent; "" when it does not apply). */
  fromEmail: string;
  fromName: string;
  /** Who holds it after ("ai_agent" for the AI agent; "" when it does not apply). */
  toEmail: string;
  toName: string;
  /** The handover's reason, the rating's score and comment; "" otherwise. */
  detail: string;
  createdAt: number;
}

/** Storage of timelines; they go with their conversation (erasure, retention), as notes do. */
export interface ActivityRepository {
  add(a: ActivityRecord): Promise<void>;
  /** The conversation's activity, oldest first, at most `limit`. */
  forConversation(conversationId: string, limit: number): Promise<ActivityRecord[]>;
}

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
 * webhooks): beside the change's own event, whose payload is unchanged.
 */
export async function recordActivity(
  tx: Pick<Repositories, "activities" | "events" | "webhooks">,
  log: EventLog,
  a: Omit<ActivityRecord, "activityId">,
): Promise<ActivityRecord> {
  const activity: ActivityRecord = { activityId: newId(), ...a };
  await tx.activities.add(activity);
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
    if (!conv || conv.accountId !== caller.accountId) throw notFound("conversation");
    return this.d.activities.forConversation(id, MAX_ACTIVITY);
  }
}
