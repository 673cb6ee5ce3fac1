import { ConversationCore, type ConversationServiceDeps } from "./conversation-core.js";
import { ConversationReads } from "./conversation-reads.js";
import { ConversationWatches } from "./conversation-watches.js";
import { CustomerMessages } from "./customer-messages.js";
import { OperatorActions } from "./operator-actions.js";
import { ConversationRatings } from "./ratings.js";

export type { AccountCaller, Caller, FrameCaller } from "../caller.js";
export type { ConversationServiceDeps } from "./conversation-core.js";
export { ConversationReads } from "./conversation-reads.js";
export { ConversationWatches } from "./conversation-watches.js";
export { CustomerMessages, type SendEvent, WEB_CHANNEL } from "./customer-messages.js";
export { OperatorActions } from "./operator-actions.js";
export type { ConversationSummary, RatingRecord, RatingRepository } from "./repository.js";
export { AI_AGENT } from "./rules.js";
export type { AccountWatchEvent, WatchEvent } from "./watch.js";

/**
 * Conversations: the one object the handlers hold, by use case — the customer's messages (customer-messages.ts),
 * the reads (conversation-reads.ts), the live watches (conversation-watches.ts) and the operators' actions
 * (operator-actions.ts) — over one shared core (conversation-core.ts: caches, keyed writes, the unit of work).
 */
export class ConversationService {
  readonly sendStream: CustomerMessages["sendStream"];
  readonly send: CustomerMessages["send"];
  readonly listContacts: ConversationReads["listContacts"];
  readonly listContactsAs: ConversationReads["listContactsAs"];
  readonly listMessages: ConversationReads["listMessages"];
  readonly listFrameConversations: ConversationReads["listFrameConversations"];
  readonly listContactConversations: ConversationReads["listContactConversations"];
  readonly watch: ConversationWatches["watch"];
  readonly watchAccount: ConversationWatches["watchAccount"];
  readonly markRead: OperatorActions["markRead"];
  readonly markUnread: OperatorActions["markUnread"];
  readonly takeOver: OperatorActions["takeOver"];
  readonly release: OperatorActions["release"];
  readonly reply: OperatorActions["reply"];
  readonly setStatus: OperatorActions["setStatus"];
  readonly rate: ConversationRatings["rate"];
  private readonly core: ConversationCore;

  constructor(d: ConversationServiceDeps) {
    const core = new ConversationCore(d);
    this.core = core;
    const messages = new CustomerMessages(core, d);
    const reads = new ConversationReads(core, d);
    const watches = new ConversationWatches(core, d);
    const actions = new OperatorActions(core, d);
    this.sendStream = messages.sendStream.bind(messages);
    this.send = messages.send.bind(messages);
    this.listContacts = reads.listContacts.bind(reads);
    this.listContactsAs = reads.listContactsAs.bind(reads);
    this.listMessages = reads.listMessages.bind(reads);
    this.listFrameConversations = reads.listFrameConversations.bind(reads);
    this.listContactConversations = reads.listContactConversations.bind(reads);
    this.watch = watches.watch.bind(watches);
    this.watchAccount = watches.watchAccount.bind(watches);
    this.markRead = actions.markRead.bind(actions);
    this.markUnread = actions.markUnread.bind(actions);
    this.takeOver = actions.takeOver.bind(actions);
    this.release = actions.release.bind(actions);
    this.reply = actions.reply.bind(actions);
    this.setStatus = actions.setStatus.bind(actions);
    const ratings = new ConversationRatings(core, d);
    this.rate = ratings.rate.bind(ratings);
  }

  /** Message pages answered from the page cache and built from storage, since start (the metrics). */
  get pageCacheCounts(): { readonly hits: number; readonly misses: number } {
    return this.core.pageCacheCounts;
  }

  /** Contact list pages answered from the list cache and built from storage, since start. */
  get listCacheCounts(): { readonly hits: number; readonly misses: number } {
    return this.core.lists.counts;
  }

  /** Forgets what this instance remembers of erased or expired conversations (undefined: of every one). */
  forget(conversationIds: readonly string[] | undefined): void {
    this.core.forget(conversationIds);
  }
}
