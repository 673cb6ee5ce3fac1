import type { OperatorProfileRepository } from "../account/operator-profile.js";
import { type Caller, seesChatbot } from "../caller.js";
import type { Clock } from "../clock.js";
import { mayAccess } from "../conversation/owners.js";
import type { ConversationRepository } from "../conversation/repository.js";
import { notFound } from "../errors.js";
import { requireUuid } from "../ids.js";
import type { EventTopic } from "../log/events.js";
import type { TypingChannel, TypingSide, TypingSignal } from "./channel.js";

/** At most one signal per conversation and side is passed on in this long (clients send about as often). */
export const TYPING_THROTTLE_MS = 2000;
/** A person shown as viewing a conversation with no new signal is hidden after this long (the console sends every 5 s). */
export const VIEWING_EXPIRES_MS = 15_000;
/** An indicator with no new signal is hidden after this long. */
export const TYPING_EXPIRES_MS = 5000;
// Bounds the throttle's memory: past this many entries, those older than the throttle are dropped.
const MAX_REMEMBERED = 10_000;

export interface TypingDeps {
  channel: TypingChannel;
  conversations: Pick<ConversationRepository, "byId">;
  profiles: OperatorProfileRepository;
  clock: Clock;
}

/** Typing indicators both ways: who may signal in which conversation, how often, and under which name. */
export class TypingService {
  private readonly last = new Map<string, number>();

  constructor(private readonly d: TypingDeps) {}

  /** Passes the caller's signal on to the conversation's watchers; false when one of its side went out just now. */
  async signal(caller: Caller, conversationId: string): Promise<boolean> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    // Another customer's or account's conversation answers exactly as one that does not exist.
    if (!mayAccess(caller, conv)) throw notFound("conversation");
    const from: TypingSide = caller.kind === "frame" ? "user" : "operator";
    const now = this.d.clock.now();
    const key = `${id}:${from}`;
    const before = this.last.get(key);
    if (before !== undefined && now - before < TYPING_THROTTLE_MS) return false;
    this.remember(key, now);
    const name = caller.kind === "account" ? await this.operatorName(caller.accountId, caller.email) : "";
    // The chatbot goes with it: an account's stream tells only the people whose teams see it (typingFor).
    this.d.channel.publish({ accountId: caller.accountId, conversationId: id, from, name, chatbotId: conv.chatbotId });
    return true;
  }

  /**
   * Tells the account's people that the caller (one of them) has the conversation open, or has left it. Throttled
   * per person and conversation like typing; leaving always goes out.
   */
  async view(caller: Caller, conversationId: string, leaving: boolean): Promise<number> {
    const id = requireUuid("conversation_id", conversationId);
    const conv = await this.d.conversations.byId(id);
    if (caller.kind !== "account" || !mayAccess(caller, conv)) throw notFound("conversation");
    const now = this.d.clock.now();
    const key = `${id}:viewing:${caller.email}`;
    const before = this.last.get(key);
    if (leaving) this.last.delete(key);
    else if (before !== undefined && now - before < TYPING_THROTTLE_MS) return VIEWING_EXPIRES_MS;
    else this.remember(key, now);
    const name = await this.operatorName(caller.accountId, caller.email);
    this.d.channel.publish({
      accountId: caller.accountId,
      conversationId: id,
      from: leaving ? "left" : "viewing",
      name,
      email: caller.email,
      chatbotId: conv.chatbotId,
    });
    return VIEWING_EXPIRES_MS;
  }

  /**
   * Tells the conversation's customer that the AI agent is looking something up (its tool calls run) for a reply that
   * no send stream carries: the one after a person's decision on a call that waited for approval.
   */
  agentLookingUp(conv: { accountId: string; conversationId: string }): void {
    this.d.channel.publish({
      accountId: conv.accountId,
      conversationId: conv.conversationId,
      from: "ai_agent",
      name: "",
    });
  }

  /** Follows the signals of a conversation or an account (for a watch stream that already admitted its caller). */
  subscribe(topic: EventTopic, listener: (signal: TypingSignal) => void): () => void {
    return this.d.channel.subscribe(topic, listener);
  }

  private async operatorName(accountId: string, email: string): Promise<string> {
    const profile = await this.d.profiles.get(accountId, email);
    return profile?.displayName || email.split("@")[0] || "";
  }

  private remember(key: string, now: number): void {
    if (this.last.size >= MAX_REMEMBERED)
      for (const [k, t] of this.last) if (now - t >= TYPING_THROTTLE_MS) this.last.delete(k);
    this.last.set(key, now);
  }
}

/**
 * What a watch stream's reader sees of the other side's typing: the customer sees operators (and the AI agent looking
 * something up), operators customers.
 */
export function typingFor(caller: Caller, s: TypingSignal): boolean {
  if (caller.kind === "frame") return s.from === "operator" || s.from === "ai_agent";
  // An account's stream follows every conversation of the account: only those of chatbots the reader's teams see.
  return s.from === "user" && (s.chatbotId === undefined || seesChatbot(caller, s.chatbotId));
}

/** Whether a watch stream's reader is told of a viewing signal: the account's people who may see the conversation. */
export function viewingFor(caller: Caller, s: TypingSignal): boolean {
  return (
    caller.kind === "account" &&
    (s.from === "viewing" || s.from === "left") &&
    s.accountId === caller.accountId &&
    seesChatbot(caller, s.chatbotId ?? "")
  );
}
