import type { AccountCaller, Caller, FrameCaller } from "../caller.js";
import { invalidArgument, notFound, permissionDenied } from "../errors.js";
import { requireUuid } from "../ids.js";
import { optionalText, page, requireEmail } from "../validate.js";
import { type ConversationCore, namesAccountOf } from "./conversation-core.js";
import type { ConversationSummary } from "./events.js";
import type { PageForm } from "./page-cache.js";
import { ConversationRatings } from "./ratings.js";
import type { ContactFilter, ContactView } from "./repository.js";
import { effectiveStatus } from "./rules.js";
import { foldForSearch } from "./search-fold.js";

const FILTERS: readonly ContactFilter[] = ["all", "unread", "live"];

/** Reading conversations: the account's contacts and a contact's conversations, the frame's list, message pages. */
export class ConversationReads {
  private readonly ratings: ConversationRatings;

  constructor(private readonly c: ConversationCore) {
    this.ratings = new ConversationRatings(c);
  }

  /** One page of the account's contacts with conversations. */
  async listContacts(
    caller: AccountCaller,
    input: {
      userEmailId: string;
      search: string;
      filter: string;
      limit: number | undefined;
      offset: number | undefined;
    },
  ): Promise<{ contacts: ContactView[]; hasMore: boolean }> {
    const email = requireEmail("user_email_id", input.userEmailId);
    const search = optionalText("search", input.search);
    const filter = (input.filter === "" ? "all" : input.filter) as ContactFilter;
    if (!FILTERS.includes(filter)) throw invalidArgument("filter", "must be one of all, unread, live");
    const { limit, offset } = page(input.limit, input.offset, 10);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const liveSince = this.c.liveSince();
    const p = await this.c.d.contacts.list({
      accountId: caller.accountId,
      search: foldForSearch(search),
      filter,
      limit,
      offset,
      liveSince,
    });
    return {
      // Named fields, not a rest/spread copy: that copy was 4% of a list request's CPU.
      contacts: p.contacts.map(
        (c): ContactView => ({
          contactId: c.contactId,
          userId: c.userId,
          contactName: c.contactName,
          phoneNumber: c.phoneNumber,
          email: c.email,
          assignedTo: c.assignedTo,
          unreadCount: c.unreadCount,
          latestMessageAt: c.latestMessageAt,
          channels: c.channels,
          latestConversationId: c.latestConversationId,
          conversationStatus: effectiveStatus(c.latestStatus, c.latestActivityAt, liveSince),
        }),
      ),
      hasMore: p.hasMore,
    };
  }

  /** One page of a conversation's messages, for its frame user or its account, in the caller's form of it. */
  async listMessages<T>(
    caller: Caller,
    input: { conversationId: string; limit: number | undefined; offset: number | undefined },
    form: PageForm<T>,
  ): Promise<T> {
    const conversationId = requireUuid("conversation_id", input.conversationId);
    const { limit, offset } = page(input.limit, input.offset, 20);
    const owner = this.c.owners.get(conversationId) ?? (await this.c.readOwner(conversationId));
    if (
      !owner ||
      owner.accountId !== caller.accountId ||
      (caller.kind === "frame" && (owner.chatbotId !== caller.chatbotId || owner.userId !== caller.userId))
    )
      throw notFound("conversation");
    const repo = this.c.d.conversations;
    return this.c.pages.read(
      conversationId,
      offset,
      limit,
      () => repo.messageCount(conversationId),
      () => repo.messages(owner, limit, offset),
      form,
    );
  }

  /** The frame user's conversations with the token's chatbot, newest first. */
  async listFrameConversations(caller: FrameCaller): Promise<ConversationSummary[]> {
    const conversations = await this.c.d.conversations.forUser(caller.accountId, caller.chatbotId, caller.userId, 50);
    return this.ratings.withRatings(conversations.map((c) => this.c.summary(c)));
  }

  /** One page of a contact's conversations, newest first. */
  async listContactConversations(
    caller: AccountCaller,
    input: { contactId: string; limit: number | undefined; offset: number | undefined },
  ): Promise<{ conversations: ConversationSummary[]; hasMore: boolean }> {
    const contactId = requireUuid("contact_id", input.contactId);
    const { limit, offset } = page(input.limit, input.offset, 10);
    // Another account's contact answers exactly as one that does not exist.
    if (!(await this.c.d.contacts.belongsTo(caller.accountId, contactId))) throw notFound("contact");
    const p = await this.c.d.conversations.forContact(contactId, limit, offset);
    return {
      conversations: await this.ratings.withRatings(p.conversations.map((c) => this.c.summary(c))),
      hasMore: p.hasMore,
    };
  }
}
