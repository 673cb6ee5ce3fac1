import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { fetchPost, publicOnlyPost } from "../agents/guarded-post.js";
import { OpenAiCompatibleAgent } from "../agents/openai-compatible.js";
import { PerChatbotAgent } from "../agents/per-chatbot.js";
import { httpToolCaller } from "../agents/tool-caller.js";
import { inspectFile } from "../attachments/inspect.js";
import type { CustomerLimitSettings } from "../config.js";
import type { AccountService } from "../domain/account/account-service.js";
import type { TeamService } from "../domain/account/team-service.js";
import type { Agent } from "../domain/agent/agent.js";
import { DirectedAgent } from "../domain/agent/director.js";
import { OfflineAgent, type SearchPassages } from "../domain/agent/offline-agent.js";
import { AgentTools } from "../domain/agent/tools.js";
import type { AuditLog } from "../domain/audit/audit-log.js";
import { ConversationActivity } from "../domain/conversation/activity.js";
import { ConversationService } from "../domain/conversation/conversation-service.js";
import { CustomerLimits } from "../domain/conversation/customer-limits.js";
import { ConversationLabels } from "../domain/conversation/labels.js";
import { Mentions, peopleOf } from "../domain/conversation/mentions.js";
import { ConversationNotes } from "../domain/conversation/notes.js";
import { AgentReplay } from "../domain/conversation/replay.js";
import { Routing } from "../domain/conversation/routing.js";
import { ConversationSearch } from "../domain/conversation/search.js";
import { type KnowledgeService, type KnowledgeView, liveSourcesIn } from "../domain/knowledge/knowledge-service.js";
import { AccountLogs } from "../domain/log/account-logs.js";
import type { EventLog } from "../domain/log/event-log.js";
import { LogFeed } from "../domain/log/log-feed.js";
import type { Repositories } from "../domain/store.js";
import type { KeySealer } from "../domain/token/key-sealer.js";
import type { TypingChannel } from "../domain/typing/channel.js";
import { TypingService } from "../domain/typing/typing-service.js";
import { checkTarget, type TargetPolicy } from "../domain/webhook/target-policy.js";
import { InProcessTyping } from "../events/typing.js";
import { propagatingPost, tracedAgent } from "../observability/spans.js";
import { Deadlines } from "../protocol/deadlines.js";
import { Heartbeats } from "../protocol/heartbeats.js";
import { type LimitRule, limiterCounter, unlimited } from "../protocol/rate-limit.js";
import { StreamGuard } from "../protocol/stream-guard.js";
import { WatchLimits } from "../protocol/watch-limits.js";
import type { Base } from "./base.js";

export interface ConversationDeps {
  eventLog: EventLog;
  sealer: KeySealer;
  team: TeamService;
  /** The chatbots' knowledge, which the built-in agent answers from. */
  knowledge: KnowledgeService;
  /** The service's agent, when a test or the command line swaps one in. */
  agent: Agent | undefined;
  /** The back end's counters of a limit rule (shared by every instance on PostgreSQL). */
  rateLimiter: (rule: LimitRule) => RateLimiterAbstract;
  /** Who a tool may be (its URL checked when saved, in production). */
  targets?: TargetPolicy;
  /** The accounts' audit log (assignments). */
  audit?: AuditLog<Repositories>;
  /** The chatbots (a published agent draft changes their knowledge and model). */
  accounts: Pick<AccountService, "updateChatbot">;
}

/** The customer limits over the back end's counters; undefined when they are off (AIAGENT_RATE_LIMIT=off). */
function customerLimits(
  cfg: CustomerLimitSettings | undefined,
  rateLimiter: ConversationDeps["rateLimiter"],
): CustomerLimits | undefined {
  if (!cfg) return undefined;
  const counter = (name: string, points: number, durationS: number) =>
    points > 0
      ? limiterCounter(rateLimiter({ name, points, durationS, blockS: 0 }), { name, points, durationS, blockS: 0 })
      : unlimited;
  return new CustomerLimits(
    {
      conversations: counter("cust-conv", cfg.conversationsPerHour, 3600),
      messages: counter("cust-msg", cfg.messagesPerMinute, 60),
      ratings: counter("conv-rating", cfg.ratingsPerHour, 3600),
    },
    cfg,
  );
}

export interface ConversationParts {
  conversations: ConversationService;
  /** Auto-assignment per team, and who is available for it. */
  router: Routing;
  /** The chatbots' tools and agent settings. */
  agentTools: AgentTools;
  /** Drafts of the chatbots' agents, replayed before they are published. */
  agentReplay: AgentReplay;
  /** The team's internal notes on conversations. */
  notes: ConversationNotes;
  /** Each person's mentions in notes, and whether they want them by e-mail. */
  mentions: Mentions;
  /** The conversations' timelines. */
  activities: ConversationActivity;
  search: ConversationSearch;
  labels: ConversationLabels;
  /** Appends to the event logs, as the store announces them: the watch streams and the dispatcher follow it. */
  events: LogFeed;
  /** One shared reader per followed account's log: the watch streams and the offline-reply follower take from it. */
  logs: AccountLogs;
  /** Stops hearing the store's announcements (at close). */
  stopLogWatch: () => void;
  watchLimits: WatchLimits;
  /** Ends open streams whose credential no longer passes the gate (revoked, expired, role changed). */
  streams: StreamGuard;
  /** The watch streams' heartbeats, on one timer for all. */
  heartbeats: Heartbeats;
  /** The watch streams' tokens' expiry, on one timer for all. */
  deadlines: Deadlines;
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
  const stopFeed = await store.onLogAdvanced((changes, deliveries, placed) =>
    events.advanced(changes, deliveries, placed),
  );
  const logs = new AccountLogs({ feed: events, history: store.events });
  const stopLogWatch = () => {
    stopFeed();
    logs.close();
  };
  const watchLimits = new WatchLimits(config.watchStreams);
  const heartbeats = new Heartbeats(config.watchStreams.heartbeatMs);
  const deadlines = new Deadlines();
  const streams = new StreamGuard(store.credentialChanges, {
    sweepMs: config.watchStreams.recheckMs,
    recheckAllMs: config.watchStreams.recheckAllMs,
  });
  // Pushed, not polled: another instance's revocation (or this one's command line, on PostgreSQL) is heard at once.
  streams.stopWith(await store.onCredentialsChanged(() => void streams.told().catch(() => undefined)));
  // The built-in agent answers from the chatbot's knowledge: its list, and its indexed sources; a model searches them
  // with the search_knowledge tool.
  const searchKnowledge: SearchPassages = (chatbot, question, limit, view, sources) =>
    d.knowledge.searchKnowledge(chatbot.chatbotId, question, limit, { chatbot, view, sources });
  // Read once per reply (the director's, else the built-in agent's own): the searches take them from there.
  const sources = (chatbotId: string, view?: KnowledgeView) => d.knowledge.sourcesFor(chatbotId, view);
  const builtIn = new OfflineAgent(searchKnowledge, sources);
  // A chatbot's own endpoint when its settings name one; the built-in agent when they name it; else the service's
  // agent (AIAGENT_LLM_* or the built-in one).
  const perChatbot = new PerChatbotAgent(
    d.agent ??
      (config.llm ? new OpenAiCompatibleAgent({ ...config.llm, post: propagatingPost(fetchPost, b.tracer) }) : builtIn),
    d.sealer,
    // A chatbot's own endpoint is a customer's choice: in production it is reached only at public addresses.
    propagatingPost(config.production ? publicOnlyPost() : fetchPost, b.tracer),
    d.agent ?? builtIn,
  );
  // Around it, what the chatbot's owner configured: handover rules, instructions, tools, the daily model budget.
  const directed = new DirectedAgent(perChatbot, {
    agents: store.agents,
    sealer: d.sealer,
    clock: b.clock,
    callTool: httpToolCaller({ development: !config.production }),
    usesModel: (chatbot) => perChatbot.usesModel(chatbot),
    defaultDailyTokens: config.agentLoop.dailyTokens,
    maxSteps: config.agentLoop.maxSteps,
    maxReplyMs: config.agentLoop.maxReplyMs,
    searchKnowledge,
    sources,
    sourcesIn: liveSourcesIn,
  });
  const agentTools = new AgentTools({
    agents: store.agents,
    chatbots: store.chatbots,
    clock: b.clock,
    sealer: d.sealer,
    development: !config.production,
    defaultDailyTokens: config.agentLoop.dailyTokens,
    ...(config.production && d.targets
      ? { checkTarget: async (field: string, url: string) => void (await checkTarget(field, url, d.targets!)) }
      : {}),
  });
  const typingChannel = await store.sharedTyping(new InProcessTyping());
  const typing = new TypingService({ ...store, channel: typingChannel, clock: b.clock });
  const nameOf = async (accountId: string, email: string) =>
    (await store.profiles.get(accountId, email))?.displayName ?? "";
  // Auto-assignment per team: handovers routed to available members, the wait drained as people come and free up.
  const router = new Routing({
    ...store,
    transaction: b.transaction,
    log: d.eventLog,
    clock: b.clock,
    idleCloseSeconds: config.idleCloseSeconds,
    auditLog: d.audit,
    nameOf,
    onError: (e) => b.log.warn("auto-assignment failed", { error: e instanceof Error ? e.message : String(e) }),
  });
  const conversations = new ConversationService(
    {
      ...store,
      events,
      history: store.events,
      logs,
      transaction: b.transaction,
      log: d.eventLog,
      agent: tracedAgent(directed, b.tracer),
      clock: b.clock,
      customerLimits: customerLimits(config.customerLimits, d.rateLimiter),
      idleCloseSeconds: config.idleCloseSeconds,
      isPersonOf: (accountId, email) => d.team.isPersonOf(accountId, email),
      ...(d.audit ? { auditLog: d.audit } : {}),
      displayNameOf: nameOf,
      router,
      agentLookingUp: (conv) => typing.agentLookingUp(conv),
    },
    { inspect: inspectFile, maxBytes: config.attachmentMaxBytes },
  );
  const agentReplay = new AgentReplay({
    drafts: store.drafts,
    chatbots: store.chatbots,
    conversations: store.conversations,
    agents: store.agents,
    tools: agentTools,
    knowledge: d.knowledge,
    agent: directed,
    clock: b.clock,
    publish: async (caller, bot, draft) => {
      const model =
        bot.agent.kind === "openai_compatible" && draft.model !== "" && draft.model !== bot.agent.model
          ? { kind: "openai_compatible", baseUrl: bot.agent.baseUrl, model: draft.model, apiKey: "" }
          : undefined;
      await d.accounts.updateChatbot(caller, bot.chatbotId, { knowledge: draft.knowledge, agent: model });
      await agentTools.updateSettings(caller, bot.chatbotId, { instructions: draft.instructions });
      return draft.tools ? agentTools.applyDraftTools(caller, bot, draft.tools) : [];
    },
  });
  const people = peopleOf(store);
  const notes = new ConversationNotes({
    ...store,
    people,
    transaction: b.transaction,
    log: d.eventLog,
    clock: b.clock,
  });
  const mentions = new Mentions({ mentions: store.mentions, alerts: store.mentionAlerts, people, clock: b.clock });
  const activities = new ConversationActivity(store);
  const search = new ConversationSearch(store.search);
  const labels = new ConversationLabels({
    ...store,
    transaction: b.transaction,
    log: d.eventLog,
    clock: b.clock,
    nameOf,
  });
  return {
    conversations,
    mentions,
    router,
    agentTools,
    agentReplay,
    notes,
    activities,
    search,
    labels,
    events,
    logs,
    stopLogWatch,
    watchLimits,
    streams,
    heartbeats,
    deadlines,
    typing,
    typingChannel,
  };
}
