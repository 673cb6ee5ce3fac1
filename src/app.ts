import { composeAccounts } from "./compose/accounts.js";
import { composeBindings, composeHandler } from "./compose/api.js";
import type { Base } from "./compose/base.js";
import { composeConversations } from "./compose/conversations.js";
import { lifecycle } from "./compose/lifecycle.js";
import { composeMail } from "./compose/mail.js";
import { composeMetrics } from "./compose/observability.js";
import { composePrivacy } from "./compose/privacy.js";
import { composeTimers } from "./compose/timers.js";
import { composeTokens } from "./compose/tokens.js";
import { composeWebhooks } from "./compose/webhooks.js";
import type { Config } from "./config.js";
import type { AccountService } from "./domain/account/account-service.js";
import type { TeamService } from "./domain/account/team-service.js";
import type { Teams } from "./domain/account/teams.js";
import type { Agent } from "./domain/agent/agent.js";
import type { AgentTools } from "./domain/agent/tools.js";
import { AuditLog } from "./domain/audit/audit-log.js";
import { type Clock, systemClock } from "./domain/clock.js";
import type { ConversationService } from "./domain/conversation/conversation-service.js";
import type { AgentReplay } from "./domain/conversation/replay.js";
import type { ConversationTimers } from "./domain/conversation/timers.js";
import type { KnowledgeService } from "./domain/knowledge/knowledge-service.js";
import { EventLog } from "./domain/log/event-log.js";
import type { LogFeed } from "./domain/log/log-feed.js";
import type { MailSender, MailTransport } from "./domain/mail/mailer.js";
import type { OfflineReplies } from "./domain/mail/offline-replies.js";
import type { PrivacyService } from "./domain/privacy/privacy-service.js";
import type { RetentionSchedule } from "./domain/privacy/retention-schedule.js";
import type { Repositories, Store } from "./domain/store.js";
import type { KeyRing } from "./domain/token/key-ring.js";
import type { SessionRegistry } from "./domain/token/session-registry.js";
import type { TokenService } from "./domain/token/token-service.js";
import type { Dispatcher, Send } from "./domain/webhook/dispatcher.js";
import type { Resolve } from "./domain/webhook/target-policy.js";
import type { WebhookService } from "./domain/webhook/webhook-service.js";
import type { Logger } from "./log.js";
import type { Metrics } from "./observability/metrics.js";
import { tracedTransaction } from "./observability/spans.js";
import { activeTracer } from "./observability/tracing.js";
import type { Deadlines } from "./protocol/deadlines.js";
import { createGate, type Gate } from "./protocol/gate.js";
import type { Heartbeats } from "./protocol/heartbeats.js";
import type { PageRoute } from "./protocol/http/pages.js";
import { type RouteTable, routeTable } from "./protocol/http/route-table.js";
import type { RunningServer } from "./protocol/http/server.js";
import type { HttpRequest, HttpResponse } from "./protocol/http/types.js";
import type { ServiceBinding } from "./protocol/rest/transcoder.js";
import type { StreamGuard } from "./protocol/stream-guard.js";
import type { WatchLimits } from "./protocol/watch-limits.js";
import { type Fsync, openStore } from "./storage/open.js";

export { MAX_BODY_BYTES } from "./compose/api.js";
export { ISSUER } from "./compose/tokens.js";
// The backup commands reach storage through the root, as everything outside src/storage does.
export { backupDatabase, restoreDatabase } from "./storage/open.js";

/** Things a test or the command line may swap in. */
export interface AppOverrides {
  clock?: Clock;
  agent?: Agent;
  /** The group commit's fsync of the log (a test holds or fails it to see answers wait for it). */
  fsync?: Fsync;
  /** Routes served before the API (the frame and the demo add theirs here). */
  extraRoutes?: (app: App) => PageRoute[];
  /** How webhook deliveries are posted (a test may swap in its own). */
  webhookSend?: Send;
  /** How e-mails reach the relay (a test may swap in its own); SMTP to AIAGENT_SMTP_URL by default. */
  mailTransport?: MailTransport;
  /** How often the e-mail outbox is looked at, ms (default 1000; a test looks more often). */
  mailPollMs?: number;
  /** How endpoint host names are resolved when saved (a test may answer private addresses). */
  resolve?: Resolve;
  /** False: no webhook dispatcher in this process (the outbox still fills; another instance delivers). */
  dispatch?: boolean;
  /** When the generated key-encryption secret is warned about: every start (the service) or once (the commands). */
  secretWarning?: "every start" | "when generated";
}

/** The wired service: storage, domain and protocol, not yet listening. */
export interface App {
  config: Config;
  /** The storage port; which back end runs is known only to src/storage. */
  store: Store;
  keys: KeyRing;
  tokens: TokenService;
  accounts: AccountService;
  team: TeamService;
  /** The account's teams: who sees which chatbots, how their conversations are assigned. */
  teams: Teams;
  /** The registry of customers' sessions (refresh tokens) and their rotation policies. */
  sessions: SessionRegistry;
  conversations: ConversationService;
  /** The chatbots' agent tools and settings. */
  agentTools: AgentTools;
  /** Drafts of the chatbots' agents, replayed before they are published. */
  agentReplay: AgentReplay;
  webhooks: WebhookService;
  /** The outbox: events written with each change. */
  eventLog: EventLog;
  /** Delivers the outbox's webhooks off the request path (undefined when turned off). */
  dispatcher: Dispatcher | undefined;
  /** The accounts' audit log. */
  audit: AuditLog;
  /** Erasure, export and retention of customers' data. */
  privacy: PrivacyService;
  /** Applies retention periods on an interval (started by listen()). */
  retention: RetentionSchedule;
  /** Live updates of conversations (the watch streams subscribe here). */
  events: LogFeed;
  watchLimits: WatchLimits;
  /** Ends open streams whose credential no longer passes the gate (revoked, expired, role changed). */
  streams: StreamGuard;
  /** The watch streams' heartbeats: one timer for all of them (`timers`, `streams`). */
  heartbeats: Heartbeats;
  /** The watch streams' tokens' expiry: one timer for all of them (`timers`, `pending`). */
  deadlines: Deadlines;
  bindings: ServiceBinding[];
  /** The RPCs in-process, through the same gate as every protocol (the pages that need a credential judged). */
  gate: Gate;
  /** Everything the server answers; its request chain is built from this table alone. */
  routes: RouteTable;
  /** The Prometheus series (GET /metrics with AIAGENT_METRICS_TOKEN). */
  metrics: Metrics;
  /** The chatbots' knowledge sources, their background indexing, and searchKnowledge. */
  knowledge: KnowledgeService;
  /** Sends the e-mail outbox (undefined without a relay: AIAGENT_SMTP_URL unset). */
  mailSender: MailSender | undefined;
  /** Queues replies to customers who are away (undefined without a relay). */
  offlineReplies: OfflineReplies | undefined;
  /** Snoozes and first-response SLA clocks; `check()` wakes and settles what is due now (tests). */
  timers: ConversationTimers<Repositories>;
  handler: (req: HttpRequest, res: HttpResponse) => void;
  log: Logger;
  /** Listens on config.port (0 for any free port). */
  listen(): Promise<RunningServer>;
  /** Flushes and closes storage (after the server has stopped). */
  close(): Promise<void>;
}

/** The one place that wires storage, domain and protocol together: each area's factory, in order. */
export async function buildApp(config: Config, log: Logger, o: AppOverrides = {}): Promise<App> {
  const clock = o.clock ?? systemClock;
  // With SQLite's synchronous=FULL kept as group commit, answers wait for a shared fsync (store.durable()).
  const { store, rateLimiter } = await openStore(config, o.fsync ? { fsync: o.fsync } : {});
  // Undefined unless OTEL_* asked for traces (startTracing, in `aiagent serve`): then nothing below traces.
  const tracer = activeTracer();
  const transaction = tracedTransaction(store.transaction.bind(store), tracer);
  const b: Base = { config, store, clock, log, tracer, transaction };
  const eventLog = new EventLog(clock);
  const audit = new AuditLog({ clock, store, transaction, retentionDays: config.auditRetentionDays });
  const token = await composeTokens(b, { rateLimiter, eventLog, audit, secretWarning: o.secretWarning });
  const { sealer, tokens } = token;
  const account = composeAccounts(b, { sealer, audit, tokens, resolve: o.resolve });
  const conversation = await composeConversations(b, {
    eventLog,
    sealer,
    team: account.team,
    agent: o.agent,
    rateLimiter,
    knowledge: account.knowledge,
    targets: account.targets,
    audit,
    accounts: account.accounts,
  });
  const { conversations } = conversation;
  // The API keys the token service has seen valid follow the credential changes the stream guard reads.
  conversation.streams.onChanges((subjects) => tokens.access.credentialsChanged(subjects));
  const privacy = await composePrivacy(b, { eventLog, audit, conversations });
  const metrics = composeMetrics(b, conversations);
  const { targets } = account;
  const webhook = composeWebhooks(b, {
    eventLog,
    feed: conversation.events,
    audit,
    sealer,
    targets,
    metrics,
    send: o.webhookSend,
    dispatch: o.dispatch,
  });
  const mail = composeMail(b, {
    sealer,
    logs: conversation.logs,
    transport: o.mailTransport,
    pollMs: o.mailPollMs,
    rateLimiter,
  });
  conversation.notes.alertMentionsWith(mail.mentionMails);
  const timer = composeTimers(b, { eventLog, mailSender: mail.mailSender });
  let listeningUrl: string | undefined;
  const parts = { ...token, ...account, ...conversation, ...privacy, ...webhook, ...mail, ...timer };
  const bindings = composeBindings(b, { ...parts, audit, listeningUrl: () => listeningUrl });
  const app: App = {
    config,
    store,
    log,
    eventLog,
    audit,
    metrics,
    bindings,
    gate: createGate(bindings),
    routes: routeTable(bindings, []),
    ...pick(token, "keys", "tokens"),
    ...pick(account, "accounts", "team", "teams", "sessions", "knowledge"),
    ...pick(
      conversation,
      "conversations",
      "agentTools",
      "agentReplay",
      "events",
      "watchLimits",
      "streams",
      "heartbeats",
      "deadlines",
    ),
    ...pick(privacy, "privacy", "retention"),
    ...webhook,
    ...pick(mail, "mailSender", "offlineReplies"),
    ...pick(timer, "timers"),
    handler: () => undefined,
    ...lifecycle(b, { ...parts, handler: () => app.handler, listening: (url) => void (listeningUrl = url) }),
  };
  const extraRoutes = o.extraRoutes?.(app) ?? [];
  ({ handler: app.handler, routes: app.routes } = composeHandler(b, {
    keys: token.keys,
    metrics,
    bindings,
    extraRoutes: [...mail.mailRoutes, ...extraRoutes],
    mailStatus: mail.mailStatus,
    pictures: account.pictures,
    chatbotPictures: account.chatbotPictures,
    attachments: conversation.conversations.attachments,
    heartbeats: conversation.heartbeats,
  }));
  return app;
}

/** Only the named parts of an area (the rest stay private to the wiring). */
function pick<T, K extends keyof T>(parts: T, ...keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, parts[k]])) as Pick<T, K>;
}
