import { fetchPost, publicOnlyPost } from "../agents/guarded-post.js";
import { OpenAiCompatibleAgent } from "../agents/openai-compatible.js";
import { PerChatbotAgent } from "../agents/per-chatbot.js";
import type { TeamService } from "../domain/account/team-service.js";
import type { Agent } from "../domain/agent/agent.js";
import { OfflineAgent } from "../domain/agent/offline-agent.js";
import type { AuditLog } from "../domain/audit/audit-log.js";
import { ConversationActivity } from "../domain/conversation/activity.js";
import { ConversationService } from "../domain/conversation/conversation-service.js";
import { ConversationNotes } from "../domain/conversation/notes.js";
import type { KeySealer } from "../domain/token/key-sealer.js";
import type { TypingChannel } from "../domain/typing/channel.js";
import { TypingService } from "../domain/typing/typing-service.js";
import type { EventLog } from "../domain/webhook/event-log.js";
import { LogFeed } from "../domain/webhook/log-feed.js";
import { InProcessTyping } from "../events/typing.js";
import { propagatingPost, tracedAgent } from "../observability/spans.js";
import { StreamGuard } from "../protocol/stream-guard.js";
import { WatchLimits } from "../protocol/watch-limits.js";
import type { Base } from "./base.js";

export interface ConversationDeps {
  eventLog: EventLog;
  sealer: KeySealer;
  team: TeamService;
  /** The service's agent, when a test or the command line swaps one in. */
  agent: Agent | undefined;
  /** The accounts' audit log (assignments). */
  audit?: AuditLog;
}

export interface ConversationParts {
  conversations: ConversationService;
  /** The team's internal notes on conversations. */
  notes: ConversationNotes;
  /** The conversations' timelines. */
  activities: ConversationActivity;
  /** Appends to the event logs, as the store announces them: the watch streams and the dispatcher follow it. */
  events: LogFeed;
  /** Stops hearing the store's announcements (at close). */
  stopLogWatch: () => void;
  watchLimits: WatchLimits;
  /** Ends open streams whose credential no longer passes the gate (revoked, expired, role changed). */
  streams: StreamGuard;
  /** Typing indicators, over their own channel between instances. */
  typing: TypingService;
  typingChannel: TypingChannel & { close(): void };
}

/** Conversations, their live updates and the limits and guard of the watch streams. */
export async function composeConversations(b: Base, d: ConversationDeps): Promise<ConversationParts> {
  const { config, store } = b;
  // The one wake-up: the store announces each append to an event log after its commit, made through this instance
  // or (on PostgreSQL) any other; watchers and the dispatcher follow it, and read what changed from the log.
  const events = new LogFeed();
  const stopLogWatch = await store.onLogAdvanced((changes, deliveries) => events.advanced(changes, deliveries));
  const watchLimits = new WatchLimits(config.watchStreams);
  const streams = new StreamGuard(config.watchStreams.recheckMs);
  const conversations = new ConversationService({
    ...store,
    events,
    history: store.events,
    transaction: b.transaction,
    log: d.eventLog,
    // A chatbot's own endpoint when its settings name one; else the service's agent (AIAGENT_LLM_* or offline).
    agent: tracedAgent(
      new PerChatbotAgent(
        d.agent ??
          (config.llm
            ? new OpenAiCompatibleAgent({ ...config.llm, post: propagatingPost(fetchPost, b.tracer) })
            : new OfflineAgent()),
        d.sealer,
        // A chatbot's own endpoint is a customer's choice: in production it is reached only at public addresses.
        propagatingPost(config.production ? publicOnlyPost() : fetchPost, b.tracer),
      ),
      b.tracer,
    ),
    clock: b.clock,
    idleCloseSeconds: config.idleCloseSeconds,
    isPersonOf: (accountId, email) => d.team.isPersonOf(accountId, email),
    ...(d.audit ? { auditLog: d.audit } : {}),
    displayNameOf: async (accountId, email) => (await store.profiles.get(accountId, email))?.displayName ?? "",
  });
  const typingChannel = await store.sharedTyping(new InProcessTyping());
  const typing = new TypingService({ ...store, channel: typingChannel, clock: b.clock });
  const notes = new ConversationNotes({ ...store, transaction: b.transaction, log: d.eventLog, clock: b.clock });
  const activities = new ConversationActivity(store);
  return { conversations, notes, activities, events, stopLogWatch, watchLimits, streams, typing, typingChannel };
}
