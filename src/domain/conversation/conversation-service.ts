import { Attachments, type FileInspector } from "./attachments.js";
import { ConversationCore, type ConversationServiceDeps } from "./conversation-core.js";
import { ConversationReads } from "./conversation-reads.js";
import { ConversationWatches } from "./conversation-watches.js";
import { CustomerMessages } from "./customer-messages.js";
import { OperatorActions } from "./operator-actions.js";
import { ConversationRatings } from "./ratings.js";
import { ToolApprovals } from "./tool-approvals.js";

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
 * Conversations, by use case — the customer's messages (customer-messages.ts), the reads (conversation-reads.ts), the
 * live watches (conversation-watches.ts), the operators' actions (operator-actions.ts) and the ratings (ratings.ts) —
 * each taking what its constructor names: the deps it reads and the parts of the shared core (conversation-core.ts:
 * caches, keyed writes, the unit of work of a change) it calls. Callers hold the use case they call.
 */
export class ConversationService {
  readonly messages: CustomerMessages;
  readonly reads: ConversationReads;
  readonly watches: ConversationWatches;
  readonly actions: OperatorActions;
  readonly ratings: ConversationRatings;
  /** The files sent with messages (attachments.ts). */
  readonly attachments: Attachments;
  /** The agent's tool calls that wait for a person's approval. */
  readonly approvals: ToolApprovals;
  private readonly core: ConversationCore;

  constructor(
    d: ConversationServiceDeps,
    /** How files are checked (src/attachments/inspect.ts) and the largest kept (AIAGENT_ATTACHMENT_MAX_BYTES). */
    files: { inspect: FileInspector; maxBytes: number },
  ) {
    const core = new ConversationCore(d);
    this.core = core;
    this.messages = new CustomerMessages(core, d);
    this.reads = new ConversationReads(core, d);
    this.watches = new ConversationWatches(core, d);
    this.actions = new OperatorActions(core, d);
    this.ratings = new ConversationRatings(core, d);
    this.attachments = new Attachments(core, {
      clock: d.clock,
      files: d.attachments,
      ...(d.displayNameOf ? { displayNameOf: d.displayNameOf.bind(d) } : {}),
      ...files,
      ...(d.customerLimits ? { customerLimits: d.customerLimits } : {}),
    });
    this.approvals = new ToolApprovals(core, d);
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
