import { type Caller, seesChatbot } from "../caller.js";
import type { ConversationRecord } from "./repository.js";

/** What never changes about a conversation once it exists: whose it is and when it started. */
export interface ConversationOwner {
  conversationId: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  createdAt: number;
}

/**
 * Whether the caller may see the conversation: its account's people see each of the account's (an operator only
 * those of the chatbots their teams see: caller.ts seesChatbot); a customer (the
 * frame) only their own, with the chatbot their token names. Anything else answers as a conversation that does not
 * exist (not_found), so a guess learns nothing.
 */
export function mayAccess<C extends Pick<ConversationOwner, "accountId" | "chatbotId" | "userId">>(
  caller: Caller,
  c: C | undefined,
): c is C {
  return (
    c !== undefined &&
    c.accountId === caller.accountId &&
    (caller.kind === "account"
      ? seesChatbot(caller, c.chatbotId)
      : c.chatbotId === caller.chatbotId && c.userId === caller.userId)
  );
}

/**
 * A bounded memory of conversations' owners, so that a page read checks access without reading the conversation.
 * Exact: a conversation's account, chatbot, user and creation time are set when it starts and never change, and
 * conversations go only by erasure or retention, which call forget() (on every instance); only conversations that
 * exist are remembered (an unknown id is read every time).
 */
export class ConversationOwners {
  private readonly known = new Map<string, ConversationOwner>();

  constructor(private readonly capacity = 10_000) {}

  /** The remembered owner of the conversation, if any. */
  get(conversationId: string): ConversationOwner | undefined {
    return this.known.get(conversationId);
  }

  /** Forgets erased or expired conversations; with none given, every one. */
  forget(conversationIds?: Iterable<string>): void {
    if (!conversationIds) this.known.clear();
    else for (const id of conversationIds) this.known.delete(id);
  }

  /** Remembers the owner of a conversation just read; the oldest entry goes when full. */
  remember(c: ConversationRecord): ConversationOwner {
    const owner: ConversationOwner = {
      conversationId: c.conversationId,
      accountId: c.accountId,
      chatbotId: c.chatbotId,
      userId: c.userId,
      createdAt: c.createdAt,
    };
    if (this.known.size >= this.capacity) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
    this.known.set(c.conversationId, owner);
    return owner;
  }
}
