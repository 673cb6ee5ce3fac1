import { type AccountCaller, type Caller, type FrameCaller, seesChatbot } from "../caller.js";
import { invalidArgument, notFound, permissionDenied } from "../errors.js";
import { requireUuid } from "../ids.js";
import { optionalText, page, requireEmail } from "../validate.js";
import type { ContactListForm, ContactPage, LoadedPage } from "./contact-list-cache.js";
import { type ConversationCore, type ConversationServiceDeps, namesAccountOf } from "./conversation-core.js";
import { type ConversationOwner, mayAccess } from "./owners.js";
import type { PageForm } from "./page-cache.js";
import { withRatings } from "./ratings.js";
import {
  type ContactFilter,
  type ContactQuery,
  type ContactView,
  type ConversationPreview,
  type ConversationSummary,
  PREVIEW_LENGTH,
} from "./repository.js";
import { effectiveStatus, slaStatus } from "./rules.js";
import { foldForSearch } from "./search-fold.js";
import { viewAssignee } from "./views.js";

const FILTERS: readonly ContactFilter[] = ["all", "unread", "live", "snoozed"];

/** What a contact list request asks. */
export interface ContactListInput {
  userEmailId: string;
  search: string;
  filter: string;
  /** all, mine or unassigned (views.ts); empty: all. */
  view?: string;
  /** Only contacts whose latest conversation carries this label (a uuid); empty: any. */
  labelId?: string;
  limit: number | undefined;
  offset: number | undefined;
}

/** The page as it is (the domain's own readers; tests). */
const ITSELF: ContactListForm<ContactPage> = { build: (p) => p, perContact: 300 };

/** Reading conversations: the account's contacts and a contact's conversations, the frame's list, message pages. */
export class ConversationReads {
  constructor(
    /** What the use cases share: this instance's caches, keyed writes, the unit of work of a change. */
    private readonly c: Pick<ConversationCore, "lists" | "liveSince" | "owners" | "pages" | "readOwner" | "summary">,
    private readonly d: Pick<ConversationServiceDeps, "contacts" | "conversations" | "ratings">,
  ) {}

  /** One page of the account's contacts with conversations. */
  listContacts(caller: AccountCaller, input: ContactListInput): Promise<ContactPage> {
    return this.listContactsAs(caller, input, ITSELF);
  }

  /**
   * One page of the account's contacts with conversations, in the caller's form of it: from the exact list cache
   * when nothing that could change it committed since it was read (contact-list-cache.ts), else from the store.
   */
  async listContactsAs<T>(caller: AccountCaller, input: ContactListInput, form: ContactListForm<T>): Promise<T> {
    const email = requireEmail("user_email_id", input.userEmailId);
    const search = optionalText("search", input.search);
    const filter = (input.filter === "" ? "all" : input.filter) as ContactFilter;
    if (!FILTERS.includes(filter)) throw invalidArgument("filter", `must be one of ${FILTERS.join(", ")}`);
    const labelId = input.labelId ? requireUuid("label_id", input.labelId) : null;
    const assignee = viewAssignee(caller, input.view ?? "");
    const { limit, offset } = page(input.limit, input.offset, 10);
    if (!namesAccountOf(caller, email)) throw permissionDenied("user_email_id is not the account of this ID token");
    const q: ContactQuery = {
      accountId: caller.accountId,
      search: foldForSearch(search),
      filter,
      assignee,
      labelId,
      limit,
      offset,
      liveSince: this.c.liveSince(),
      hiddenChatbots: caller.hiddenChatbots?.length ? caller.hiddenChatbots : undefined,
    };
    const contacts = this.d.contacts;
    // The version first: the page read after it shows at least that version, never less, so no page is kept under
    // a version newer than what it shows.
    const version = await contacts.listVersion(q.accountId);
    const lists = this.c.lists;
    const key = lists.keyOf({
      accountId: q.accountId,
      filter,
      assignee: assignee ?? "",
      labelId: labelId ?? "",
      hidden: q.hiddenChatbots?.join(",") ?? "",
      limit,
      offset,
      search: q.search,
    });
    // A remembered page is the async function's value itself (returning the cache's promise would adopt it: two more
    // turns of the microtask queue).
    return (
      lists.kept(key, version, q.liveSince, form) ??
      lists.load(key, version, q.liveSince, () => this.loadContacts(q), form)
    );
  }

  /** A page from the store, with how long the passage of time leaves it as it is. */
  private async loadContacts(q: ContactQuery): Promise<LoadedPage> {
    const p = await this.d.contacts.list(q);
    const previews = await this.d.conversations.previews(p.contacts.map((c) => c.latestConversationId));
    const { liveSince } = q;
    let liveUntil = Number.POSITIVE_INFINITY;
    // A conversation shown live reads closed once liveSince passes its activity.
    for (const c of p.contacts)
      if (c.latestStatus === "live" && c.latestActivityAt !== null && c.latestActivityAt >= liveSince)
        liveUntil = Math.min(liveUntil, c.latestActivityAt);
    if (q.filter === "live") {
      // The contacts skipped by the offset are not read: one of them turning idle would move the page.
      if (q.offset > 0) liveUntil = Number.NEGATIVE_INFINITY;
      // A listed contact (or the next one, which decides has_more) leaves the list once its live activity is idle.
      for (const c of p.contacts) liveUntil = Math.min(liveUntil, c.liveActivityAt ?? Number.NEGATIVE_INFINITY);
      if (p.nextLiveActivityAt !== undefined)
        liveUntil = Math.min(liveUntil, p.nextLiveActivityAt ?? Number.NEGATIVE_INFINITY);
    }
    return {
      page: {
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
            ...previewOf(previews.get(c.latestConversationId)),
          }),
        ),
        hasMore: p.hasMore,
      },
      liveUntil,
    };
  }

  /** One page of a conversation's messages, for its frame user or its account, in the caller's form of it. */
  listMessages<T>(
    caller: Caller,
    input: { conversationId: string; limit: number | undefined; offset: number | undefined },
    form: PageForm<T>,
  ): Promise<T> {
    // Not an async function (the frame's every read comes here): the page's promise is returned as it is, the owner
    // read chained only when it is not known. A throw is the promise's rejection.
    try {
      const conversationId = requireUuid("conversation_id", input.conversationId);
      const { limit, offset } = page(input.limit, input.offset, 20);
      const owner = this.c.owners.get(conversationId);
      if (owner) return this.messagePage(caller, conversationId, owner, limit, offset, form);
      return this.c
        .readOwner(conversationId)
        .then((o) => this.messagePage(caller, conversationId, o, limit, offset, form));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  private messagePage<T>(
    caller: Caller,
    conversationId: string,
    owner: ConversationOwner | undefined,
    limit: number,
    offset: number,
    form: PageForm<T>,
  ): Promise<T> {
    if (!mayAccess(caller, owner)) throw notFound("conversation");
    const repo = this.d.conversations;
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
    const conversations = await this.d.conversations.forUser(caller.accountId, caller.chatbotId, caller.userId, 50);
    return withRatings(
      this.d.ratings,
      conversations.map((c) => this.c.summary(c)),
    );
  }

  /** One page of a contact's conversations, newest first. */
  async listContactConversations(
    caller: AccountCaller,
    input: { contactId: string; limit: number | undefined; offset: number | undefined },
  ): Promise<{ conversations: ConversationSummary[]; hasMore: boolean }> {
    const contactId = requireUuid("contact_id", input.contactId);
    const { limit, offset } = page(input.limit, input.offset, 10);
    // Another account's contact answers exactly as one that does not exist.
    if (!(await this.d.contacts.belongsTo(caller.accountId, contactId))) throw notFound("contact");
    const p = await this.d.conversations.forContact(contactId, limit, offset);
    // The conversations of chatbots the caller's teams do not see are left out of the page.
    const seen = p.conversations.filter((c) => seesChatbot(caller, c.chatbotId));
    return {
      conversations: await withRatings(
        this.d.ratings,
        seen.map((c) => this.c.summary(c)),
      ),
      hasMore: p.hasMore,
    };
  }
}

/** The list's preview fields of a conversation: the last message on one line, cut at PREVIEW_LENGTH. */
function previewOf(p: ConversationPreview | undefined) {
  if (!p)
    return {
      chatbotId: "",
      chatbotName: "",
      latestMessagePreview: "",
      latestMessageRole: "" as const,
      snoozedUntil: null,
      firstResponseDueAt: null,
      firstResponseStatus: "none" as const,
      priority: "none" as const,
    };
  const line = p.content.replace(/\s+/g, " ").trim();
  const status = slaStatus(p.timers);
  return {
    chatbotId: p.chatbotId,
    chatbotName: p.chatbotName,
    latestMessagePreview: line.length > PREVIEW_LENGTH ? `${line.slice(0, PREVIEW_LENGTH - 1)}…` : line,
    latestMessageRole: p.role,
    snoozedUntil: p.timers.snoozedUntil,
    firstResponseDueAt: status === "none" ? null : p.timers.slaDueAt,
    firstResponseStatus: status,
    priority: p.priority,
  };
}
