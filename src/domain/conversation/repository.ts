import type { KnowledgeSnippet } from "../account/repository.js";
import type { MessageEffect, Priority, SlaStatus, TimerState } from "./rules.js";

export type { SlaStatus, TimerState } from "./rules.js";

/** What the client's server tells about its customer; empty strings leave stored values as they are. */
export interface ContactProfile {
  contactName: string;
  email: string;
  phoneNumber: string;
}

/** Which contacts a list shows. */
export type ContactFilter = "all" | "unread" | "live" | "snoozed";

/** One page request of the contact list. */
export interface ContactQuery {
  accountId: string;
  /** Already folded with foldForSearch; empty: no search. */
  search: string;
  filter: ContactFilter;
  /** Only contacts whose latest conversation is held by this assignee (lower case; ai_agent: unassigned); null: any. */
  assignee: string | null;
  /** Contacts whose latest conversation is of one of these chatbots are left out (the caller's teams); empty: none. */
  hiddenChatbots?: readonly string[] | undefined;
  /** Only contacts whose latest conversation carries this label; null or absent: any. */
  labelId?: string | null | undefined;
  limit: number;
  offset: number;
  /** Conversations with no message since this instant read as closed (idle). */
  liveSince: number;
}

/** A contact as listed. */
export interface ContactView extends Omit<StoredContact, "latestStatus" | "latestActivityAt" | "liveActivityAt"> {
  /** The latest conversation's status as a reader sees it (idle conversations read closed). */
  conversationStatus: "live" | "closed";
  /** The latest conversation's chatbot. */
  chatbotId: string;
  /** That chatbot's name ("" when none): the list holds only chatbots the reader's teams see. */
  chatbotName: string;
  /** The start of the latest conversation's last message, on one line ("" when none). */
  latestMessagePreview: string;
  /** Who wrote it ("" when none). */
  latestMessageRole: MessageRole | "";
  /** Until when the latest conversation is snoozed (null: it is not). */
  snoozedUntil: number | null;
  /** When its first response is due (null: no SLA clock runs for it). */
  firstResponseDueAt: number | null;
  firstResponseStatus: SlaStatus;
  /** The latest conversation's priority ("none" when it has none). */
  priority: Priority;
}

/** A conversation's chatbot and last message, as the contact list shows them. */
export interface ConversationPreview {
  chatbotId: string;
  /** The chatbot's name as it is now. */
  chatbotName: string;
  role: MessageRole | "";
  /** The message's first PREVIEW_LENGTH characters as stored. */
  content: string;
  /** The conversation's snooze and SLA clock. */
  timers: TimerState;
  priority: Priority;
}

/** Characters of a last message the contact list shows at most. */
export const PREVIEW_LENGTH = 120;

/** A contact as stored, with its latest conversation's stored status and last activity. */
export interface StoredContact {
  contactId: string;
  userId: string;
  contactName: string;
  phoneNumber: string;
  email: string;
  latestStatus: "live" | "closed" | null;
  /** The latest conversation's last message (or creation) instant. */
  latestActivityAt: number | null;
  /** The last activity of the contact's live conversations (null: none is stored live); filter=live reads it. */
  liveActivityAt: number | null;
  assignedTo: string;
  unreadCount: number;
  latestMessageAt: number;
  channels: string[];
  /** The contact's latest conversation. */
  latestConversationId: string;
}

/** A conversation as stored. */
export interface ConversationRecord {
  conversationId: string;
  accountId: string;
  chatbotId: string;
  contactId: string;
  userId: string;
  channel: string;
  status: "live" | "closed";
  assignedTo: string;
  /** The display name of the operator in assignedTo; "" while the AI agent answers. */
  operatorName: string;
  createdAt: number;
  lastMessageAt: number | null;
  messageCount: number;
  /** User messages after the account's read marker. */
  unreadCount: number;
}

/** Who wrote a message. */
export type MessageRole = "user" | "assistant" | "operator";

/** A file sent with a message: what readers are told of it (its bytes are kept beside, by attachments.ts). */
export interface MessageAttachment {
  /** 32 hexadecimal digits, random: the file's unguessable address. */
  attachmentId: string;
  /** The sender's file name, without folders. */
  name: string;
  contentType: string;
  /** Bytes as stored (an image after re-encoding). */
  size: number;
  /** An image's pixels; 0 for other files. */
  width: number;
  height: number;
}

/** A stored file with what it is served as. */
export interface StoredFile {
  attachmentId: string;
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

/**
 * Storage of the files sent with messages: each belongs to its message, and goes when the message goes (erasure,
 * retention); `put` runs in the message's unit of work, after the message is appended.
 */
export interface AttachmentRepository {
  put(
    file: StoredFile & { messageId: string; conversationId: string; accountId: string; createdAt: number },
  ): Promise<void>;
  file(attachmentId: string): Promise<StoredFile | undefined>;
  /** The files of the account's conversations (an export), in message order. */
  ofConversations(conversationIds: readonly string[]): Promise<(StoredFile & { messageId: string })[]>;
}

/** A message as stored. */
export interface MessageRecord {
  messageId: string;
  conversationId: string;
  conversationCreatedAt: number;
  messageOrder: number;
  role: MessageRole;
  content: string;
  toolCalls: string;
  documents: KnowledgeSnippet[];
  createdAt: number;
  /** Files sent with it; absent when none. */
  attachments?: MessageAttachment[];
  /** An operator reply's author, by display name as it was then; absent for other messages (and older replies). */
  authorName?: string;
}

/** A message to append; the repository assigns its order. */
export interface NewMessage {
  messageId: string;
  role: MessageRole;
  content: string;
  toolCalls: string;
  documents: KnowledgeSnippet[];
  createdAt: number;
  /** Files sent with it (their bytes are stored in the same unit of work); absent when none. */
  attachments?: MessageAttachment[];
  /** An operator reply's author, by display name; absent for the customer's and the agent's. */
  authorName?: string;
}

/** A conversation to start together with its first message. */
export interface NewConversation {
  conversationId: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  channel: string;
  status: "live" | "closed";
  assignedTo: string;
}

/** The parts of a conversation its messages carry. */
export type ConversationRef = Pick<ConversationRecord, "conversationId" | "createdAt">;

/** Storage of contacts. */
export interface ContactRepository {
  /** Creates the contact of (account, user) or updates its profile; returns its contact_id. */
  upsert(accountId: string, userId: string, profile: ContactProfile | undefined, now: number): Promise<string>;
  /**
   * `upsert` for a caller that needs no answer (a token issue): in a unit of work a back end may send it with the
   * unit's commit, in the same round trip (PostgreSQL does when no profile field is given: there is nothing to merge).
   */
  ensure(accountId: string, userId: string, profile: ContactProfile | undefined, now: number): Promise<void>;
  /** One page; `nextLiveActivityAt` is the live activity of the contact after it (undefined: there is none). */
  list(
    q: ContactQuery,
  ): Promise<{ contacts: StoredContact[]; hasMore: boolean; nextLiveActivityAt?: number | null | undefined }>;
  /** Whether the contact exists and belongs to the account. */
  belongsTo(accountId: string, contactId: string): Promise<boolean>;
  /**
   * What the account's contact lists are made of, as one value that changes with every committed change of them:
   * its event counter (every message, status, assignment and read marker records an event) and the count of
   * the changes that record none (profiles, retention). Two equal values mean no such change committed between.
   */
  listVersion(accountId: string): Promise<string>;
}

/** Storage of conversations and their messages; every write keeps the contact's aggregates in the same transaction. */
export interface ConversationRepository {
  byId(conversationId: string): Promise<ConversationRecord | undefined>;
  /**
   * Appends a message (starting the conversation when `start` is given) in one transaction; order is next in line.
   * `effect` says what it does to the conversation's unread count and status (the domain's rules decide).
   */
  append(conversationId: string, m: NewMessage, effect: MessageEffect, start?: NewConversation): Promise<MessageRecord>;
  /**
   * As append, and answers the conversation as the append left it, which the back end has at hand from its write
   * (what byId would answer right after, in the same unit of work): no read of it after the append.
   */
  appendAndRead(
    conversationId: string,
    m: NewMessage,
    effect: MessageEffect,
    start?: NewConversation,
  ): Promise<{ message: MessageRecord; conversation: ConversationRecord }>;
  /** Messages with message_order in (offset, offset + limit], in order; the caller has the conversation already. */
  messages(
    conv: ConversationRef,
    limit: number,
    offset: number,
  ): Promise<{ messages: MessageRecord[]; hasMore: boolean }>;
  /** How many messages the conversation has (its latest message_order), or undefined when it does not exist. */
  messageCount(conversationId: string): Promise<number | undefined>;
  /** The latest messages, oldest first, for the agent's context. */
  recent(conv: ConversationRef, count: number): Promise<MessageRecord[]>;
  /** The user's conversations with one chatbot, newest first. */
  forUser(accountId: string, chatbotId: string, userId: string, limit: number): Promise<ConversationRecord[]>;
  /** One page of a contact's conversations, newest first. */
  forContact(
    contactId: string,
    limit: number,
    offset: number,
  ): Promise<{ conversations: ConversationRecord[]; hasMore: boolean }>;
  /** The chatbot and last message (its first PREVIEW_LENGTH characters) of each of these conversations. */
  previews(conversationIds: readonly string[]): Promise<Map<string, ConversationPreview>>;
  markRead(conversationId: string): Promise<void>;
  /**
   * Moves the read marker back to just before the latest customer message (that one counts as unread again);
   * a conversation with no customer message is left as it is.
   */
  markUnread(conversationId: string): Promise<void>;
  assign(conversationId: string, assignee: string, operatorName: string): Promise<void>;
  setStatus(conversationId: string, status: "live" | "closed", now: number): Promise<void>;
}

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
  /** A person changed its labels (`detail`: "+Name" added, "-Name" removed, comma-separated). */
  "labeled",
  /** A person changed its priority (`detail`: "low → high"). */
  "prioritized",
  /** A person snoozed it (`detail`: until when, ISO 8601). */
  "snoozed",
  /** It woke (`detail`: time, customer or person). */
  "unsnoozed",
  /** It missed its first-response SLA (`detail`: when the reply was due, ISO 8601). */
  "sla_breached",
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

/** An internal note of the account's people on a conversation: never shown to the customer. */
export interface NoteRecord {
  noteId: string;
  accountId: string;
  conversationId: string;
  /** The e-mail of the person who wrote it. */
  authorEmail: string;
  content: string;
  createdAt: number;
  /** The people it mentions (member ids; the account's id for its owner), kept in note_mentions; absent: none. */
  mentionedMemberIds?: string[];
}

/** Storage of notes; they go with their conversation (erasure, retention). */
export interface NoteRepository {
  add(note: NoteRecord): Promise<void>;
  /** The conversation's notes, oldest first, at most `limit`. */
  forConversation(conversationId: string, limit: number): Promise<NoteRecord[]>;
}

/** A customer's rating of a conversation, as stored (one per conversation: the latest counts). */
export interface RatingRecord extends ConversationRating {
  conversationId: string;
  accountId: string;
}

/** Where ratings are kept. */
export interface RatingRepository {
  /** Stores the rating, replacing an earlier one of the same conversation. */
  set(r: RatingRecord): Promise<void>;
  /** The ratings of these conversations (those that have one). */
  forConversations(conversationIds: readonly string[]): Promise<Map<string, ConversationRating>>;
}

/** A conversation's state as shown to its readers (and pushed to its watchers). */
export interface ConversationSummary {
  conversationId: string;
  createdAt: number;
  status: "live" | "closed";
  assignedTo: string;
  /** The display name of the operator who holds it; "" while the AI agent answers. */
  operatorName: string;
  latestMessageAt: number | null;
  channel: string;
  unreadCount: number;
  /** The customer's rating, once given (lists and the conversation.rated event carry it). */
  rating?: ConversationRating;
}

/** How the customer rated a closed conversation. */
export interface ConversationRating {
  /** 1 (bad) to 5 (very good). */
  score: number;
  comment: string;
  ratedAt: number;
}

/** A conversation whose snooze or SLA clock is due. */
export interface DueTimer {
  conversationId: string;
  accountId: string;
  /** The snooze's end, or the SLA's due instant. */
  at: number;
}

/** Storage of the conversations' snoozes and first-response SLA clocks (columns of the conversation). */
export interface TimerRepository {
  /** The timers of these conversations (a missing one is left out). */
  states(conversationIds: readonly string[]): Promise<Map<string, TimerState>>;
  /** Snoozes the conversation until `until`, or wakes it (null); answers the snooze it replaced (null: none). */
  setSnooze(conversationId: string, until: number | null): Promise<number | null>;
  /**
   * Ends the conversation's snooze when it is still `until` (any snooze when null); true only for the call that
   * ended it, so two instances waking it at once record its waking once.
   */
  wake(conversationId: string, until: number | null): Promise<boolean>;
  /** Snoozes ended by `now`, earliest first. */
  dueSnoozes(now: number, limit: number): Promise<DueTimer[]>;
  /**
   * Starts the conversation's first-response clock at `at`, due after its chatbot's SLA, unless its chatbot has
   * none, a person already wrote in it, or a clock ran for it before. Answers the due instant when it started one.
   */
  startSla(conversationId: string, at: number): Promise<number | null>;
  /** Pending clocks due by `now`, earliest first. */
  dueSlas(now: number, limit: number): Promise<DueTimer[]>;
  /**
   * Settles the conversation's pending clock when due by `now`: met (a person wrote by the due instant), cancelled
   * (closed unanswered) or breached. Answers the outcome only to the call that settled it (undefined otherwise).
   */
  settleSla(conversationId: string, now: number): Promise<Exclude<SlaStatus, "none" | "pending"> | undefined>;
}
