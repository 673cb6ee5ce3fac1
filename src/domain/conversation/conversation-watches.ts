import { type AccountCaller, type Caller, seesChatbot } from "../caller.js";
import { invalidArgument, permissionDenied } from "../errors.js";
import { requireUuid } from "../ids.js";
import { deferred } from "../streams.js";
import { requireEmail } from "../validate.js";
import { type ConversationCore, type ConversationServiceDeps, namesAccountOf } from "./conversation-core.js";
import { type AccountWatchEvent, parseCursor, type WatchEvent } from "./watch.js";

/** Internal notes are for the account's people only: never for the customer (the frame), on any stream. */
export const seesNotes = (caller: Caller): boolean => caller.kind === "account";

/** Following conversations live: one conversation (the frame or the inbox), or every one of the account. */
export class ConversationWatches {
  constructor(
    /** What the use cases share: this instance's caches, keyed writes, the unit of work of a change. */
    private readonly c: Pick<
      ConversationCore,
      "accountConversation" | "frameConversation" | "owners" | "readOwner" | "summary" | "watches"
    >,
    private readonly d: Pick<ConversationServiceDeps, "clock" | "router">,
  ) {}

  /**
   * Follows one conversation: its state, then its messages after `afterMessageOrder` (or `afterCursor`), then each
   * change as it is committed, each message once and in order (see watch.ts). Ends when the signal aborts or the
   * events channel closes.
   */
  watch(
    caller: Caller,
    input: { conversationId: string; afterMessageOrder: number; afterCursor?: string },
    signal: AbortSignal,
  ): AsyncIterable<WatchEvent> {
    // Checked, then the watch's own events: no layer of this method between them and the stream (streams.ts).
    return deferred(async () => {
      const conversationId = requireUuid("conversation_id", input.conversationId);
      if (!Number.isInteger(input.afterMessageOrder) || input.afterMessageOrder < 0)
        throw invalidArgument("after_message_order", "must be an integer, 0 or more");
      const after = input.afterCursor ? parseCursor("after_cursor", input.afterCursor) : input.afterMessageOrder;
      const conv =
        caller.kind === "frame"
          ? await this.c.frameConversation(caller, conversationId)
          : await this.c.accountConversation(caller, conversationId);
      return this.c.watches.conversation(conv, this.c.summary(conv), after, signal, seesNotes(caller));
    });
  }

  /**
   * Follows every conversation of the account (a live inbox): changes only, from the instant it answers first, or
   * from `afterCursor` (a cursor this stream sent) to resume exactly where an earlier stream ended.
   */
  async *watchAccount(
    caller: AccountCaller,
    input: { userEmailId: string; afterCursor?: string },
    signal: AbortSignal,
  ): AsyncGenerator<AccountWatchEvent> {
    const email = requireEmail("user_email_id", input.userEmailId);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const events = this.c.watches.account(caller.accountId, this.d.clock.now(), input.afterCursor ?? "", signal);
    // A person with the inbox open is online: auto-assignment may give them work while it stays open (routing.ts).
    const leave = this.d.router?.online(caller);
    try {
      if (!caller.hiddenChatbots?.length) {
        yield* events;
        return;
      }
      // An operator whose teams do not see some chatbots hears nothing of their conversations.
      for await (const e of events) {
        const id = conversationOf(e);
        const owner = id === undefined ? undefined : (this.c.owners.get(id) ?? (await this.c.readOwner(id)));
        if (owner === undefined || seesChatbot(caller, owner.chatbotId)) yield e;
      }
    } finally {
      leave?.();
    }
  }
}

/** The conversation an account watch's event is about (undefined for `subscribed`). */
function conversationOf(e: AccountWatchEvent): string | undefined {
  if (e.type === "conversation") return e.conversation.conversationId;
  if (e.type === "message") return e.message.conversationId;
  if (e.type === "note") return e.note.conversationId;
  return undefined;
}
