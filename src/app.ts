import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AccountService as AccountServiceDesc } from "../gen/aiagent/v1/account_service_pb.js";
import { ConversationService as ConversationServiceDesc } from "../gen/aiagent/v1/conversation_service_pb.js";
import { SessionService as SessionServiceDesc } from "../gen/aiagent/v1/session_service_pb.js";
import { TokenService as TokenServiceDesc } from "../gen/aiagent/v1/token_service_pb.js";
import { WebhookService as WebhookServiceDesc } from "../gen/aiagent/v1/webhook_service_pb.js";
import { publicOnlyPost } from "./agents/guarded-post.js";
import { OpenAiCompatibleAgent } from "./agents/openai-compatible.js";
import { PerChatbotAgent } from "./agents/per-chatbot.js";
import { type Config, ConfigError } from "./config.js";
import { AccountService } from "./domain/account/account-service.js";
import { OperatorProfiles } from "./domain/account/operator-profile.js";
import { SavedReplies } from "./domain/account/saved-replies.js";
import { TeamService } from "./domain/account/team-service.js";
import type { Agent } from "./domain/agent/agent.js";
import { OfflineAgent } from "./domain/agent/offline-agent.js";
import { AuditLog } from "./domain/audit/audit-log.js";
import { type Clock, systemClock } from "./domain/clock.js";
import { ConversationService } from "./domain/conversation/conversation-service.js";
import type { ConversationEvents } from "./domain/conversation/events.js";
import { ConversationNotes } from "./domain/conversation/notes.js";
import { PrivacyService } from "./domain/privacy/privacy-service.js";
import { RetentionSchedule } from "./domain/privacy/retention-schedule.js";
import type { Store } from "./domain/store.js";
import { JwtStrategy } from "./domain/token/jwt-strategy.js";
import { KeyRing } from "./domain/token/key-ring.js";
import { KeySealError } from "./domain/token/key-sealer.js";
import { SessionRegistry } from "./domain/token/session-registry.js";
import { TokenService } from "./domain/token/token-service.js";
import { Dispatcher, type Send } from "./domain/webhook/dispatcher.js";
import { EventLog } from "./domain/webhook/event-log.js";
import { checkTarget, type Resolve } from "./domain/webhook/target-policy.js";
import { WebhookService } from "./domain/webhook/webhook-service.js";
import { InProcessConversationEvents } from "./events/in-process.js";
import { keySealer } from "./key-encryption.js";
import type { Logger } from "./log.js";
import { Metrics } from "./observability/metrics.js";
import { metricsRoute } from "./observability/metrics-route.js";
import { RpcObserver } from "./observability/rpc.js";
import { observedSend, tracedAgent, tracedTransaction } from "./observability/spans.js";
import { activeTracer } from "./observability/tracing.js";
import { guardService } from "./protocol/access.js";
import { Authenticator } from "./protocol/auth.js";
import type { AnyHandler } from "./protocol/call.js";
import { connectRoute } from "./protocol/connect-parse-errors.js";
import { createConnectRoutes, peerKey } from "./protocol/connect-routes.js";
import { durableHandlers } from "./protocol/durable.js";
import { withAccessLog } from "./protocol/http/access-log.js";
import { docsRoutes } from "./protocol/http/docs-routes.js";
import { opsRoutes } from "./protocol/http/ops-routes.js";
import { chain, listen, type RunningServer } from "./protocol/http/server.js";
import { type HttpRequest, type HttpResponse, type Route, sendJson } from "./protocol/http/types.js";
import { type CounterStore, limiterCounter } from "./protocol/rate-limit.js";
import { withFieldRules } from "./protocol/rest/field-rules.js";
import { createTranscoder, type ServiceBinding } from "./protocol/rest/transcoder.js";
import { accountHandlers } from "./protocol/services/account-handlers.js";
import { conversationHandlers } from "./protocol/services/conversation-handlers.js";
import { privacyHandlers } from "./protocol/services/privacy-handlers.js";
import { savedReplyHandlers } from "./protocol/services/saved-reply-handlers.js";
import { sessionHandlers } from "./protocol/services/session-handlers.js";
import { tokenHandlers } from "./protocol/services/token-handlers.js";
import { eventBody, webhookHandlers } from "./protocol/services/webhook-handlers.js";
import { StreamGuard } from "./protocol/stream-guard.js";
import { noTokenLimits, type TokenGuard, tokenLimits } from "./protocol/token-limits.js";
import { WatchLimits } from "./protocol/watch-limits.js";
import { type Fsync, openStore } from "./storage/open.js";
import { isPublicAddress } from "./webhooks/addresses.js";
import { httpSender } from "./webhooks/http-sender.js";
import { resolveAll, withLiterals } from "./webhooks/resolve.js";
import { standardSign } from "./webhooks/signer.js";

// The backup commands reach storage through the root, as everything outside src/storage does.
export { backupDatabase, restoreDatabase } from "./storage/open.js";

/** The issuer claim of every token this service signs. */
export const ISSUER = "aiagent";
/** The watch stream's paths: Connect/gRPC and the JSON route. */
const WATCH_PATHS = new Set([
  `/${ConversationServiceDesc.typeName}/${ConversationServiceDesc.method.watchConversation.name}`,
  `/${ConversationServiceDesc.typeName}/${ConversationServiceDesc.method.watchAccount.name}`,
  "/watch_conversation",
  "/watch_account",
]);
/** Largest JSON request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Things a test or the command line may swap in. */
export interface AppOverrides {
  clock?: Clock;
  agent?: Agent;
  /** The group commit's fsync of the log (a test holds or fails it to see answers wait for it). */
  fsync?: Fsync;
  /** Routes served before the API (the frame and the demo add theirs here). */
  extraRoutes?: (app: App) => Route[];
  /** How webhook deliveries are posted (a test may swap in its own). */
  webhookSend?: Send;
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
  /** The token routes' abuse limits (the console's sign-in counts against the same ones as get_id_token). */
  tokenGuard: TokenGuard;
  accounts: AccountService;
  team: TeamService;
  /** The registry of customers' sessions (refresh tokens) and their rotation policies. */
  sessions: SessionRegistry;
  conversations: ConversationService;
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
  events: ConversationEvents & { close(): void };
  watchLimits: WatchLimits;
  /** Ends open streams whose credential no longer passes the gate (revoked, expired, role changed). */
  streams: StreamGuard;
  bindings: ServiceBinding[];
  /** The Prometheus series (GET /metrics with AIAGENT_METRICS_TOKEN). */
  metrics: Metrics;
  handler: (req: HttpRequest, res: HttpResponse) => void;
  log: Logger;
  /** Listens on config.port (0 for any free port). */
  listen(): Promise<RunningServer>;
  /** Flushes and closes storage (after the server has stopped). */
  close(): Promise<void>;
}

/** The one place that wires storage, domain and protocol together. */
export async function buildApp(config: Config, log: Logger, o: AppOverrides = {}): Promise<App> {
  const clock = o.clock ?? systemClock;
  // With SQLite's synchronous=FULL kept as group commit, answers wait for a shared fsync (store.durable()).
  const { store, rateLimiter } = await openStore(config, o.fsync ? { fsync: o.fsync } : {});
  // Undefined unless OTEL_* asked for traces (startTracing, in `aiagent serve`): then nothing below traces.
  const tracer = activeTracer();
  const transaction = tracedTransaction(store.transaction.bind(store), tracer);
  const durable = (h: Record<string, AnyHandler>) => durableHandlers(h, () => store.durable());
  const maxLifetimeMs = Math.max(config.accessTokenTtl, config.idTokenTtl) * 1000;
  let keys: KeyRing;
  let sealer: ReturnType<typeof keySealer>;
  try {
    sealer = keySealer(config, log, o.secretWarning);
    keys = await KeyRing.open(store.signingKeys, clock, {
      maxTokenLifetimeMs: maxLifetimeMs,
      refreshIntervalMs: config.signingKeyRefreshSeconds * 1000,
      sealer,
      transaction,
    });
  } catch (e) {
    await store.close();
    if (e instanceof KeySealError) throw new ConfigError(`signing keys in ${config.dbPath}: ${e.message}`);
    throw e;
  }
  // On PostgreSQL a rotation anywhere is announced, and this instance signs with the new key at once.
  const stopKeyWatch = await store.onSigningKeysChanged(() => void keys.reload().catch(() => undefined));
  const jwt = new JwtStrategy(keys, clock, ISSUER);
  // Several instances on one PostgreSQL count the token routes' abuse limits together.
  const counters: CounterStore = (rule) => limiterCounter(rateLimiter(rule), rule);
  const limits = config.rateLimit ? tokenLimits(config.rateLimit, counters) : noTokenLimits;
  const eventLog = new EventLog(clock);
  const audit = new AuditLog({ clock, store, transaction, retentionDays: config.auditRetentionDays });
  const tokens = new TokenService({
    ...store,
    transaction,
    log: eventLog,
    audit,
    jwt,
    clock,
    ttl: { access: config.accessTokenTtl, refresh: config.refreshTokenTtl, id: config.idTokenTtl },
    admit: limits.account,
  });
  // Who an outgoing request (a webhook, a chatbot's agent endpoint) may reach: public addresses only in production.
  const targets = {
    development: !config.production,
    resolve: withLiterals(o.resolve ?? resolveAll),
    isPublic: isPublicAddress,
  };
  const accounts = new AccountService({
    ...store,
    clock,
    transaction,
    sealer,
    audit,
    allowLoopbackHttp: !config.production,
    // In development an agent may be any local or not-yet-resolvable model server; in production, public ones only.
    ...(config.production
      ? { checkEndpoint: async (field: string, url: string) => void (await checkTarget(field, url, targets)) }
      : {}),
  });
  // A member removed or a password changed revokes what descends from them (lineage.ts), tokens and streams.
  const team = new TeamService({ ...store, clock, audit, revoke: (ids, keep) => tokens.revokeLineage(ids, keep) });
  const profiles = new OperatorProfiles({ profiles: store.profiles, clock });
  const sessions = new SessionRegistry({
    refreshTokens: store.refreshTokens,
    clock,
    chatbotOf: (caller, chatbotId) => accounts.chatbot(caller, chatbotId),
    audit,
  });
  // Watchers see a change only once it is durable: the events wait for the same fsync the answers wait for.
  const local = new InProcessConversationEvents(() => store.durable());
  // Several instances on one PostgreSQL: a change written through any of them reaches every watcher.
  const events = await store.sharedEvents(local);
  const watchLimits = new WatchLimits(config.watchStreams);
  const streams = new StreamGuard(config.watchStreams.recheckMs);
  const conversations = new ConversationService({
    ...store,
    events,
    history: store.events,
    transaction,
    log: eventLog,
    // A chatbot's own endpoint when its settings name one; else the service's agent (AIAGENT_LLM_* or offline).
    agent: tracedAgent(
      new PerChatbotAgent(
        o.agent ?? (config.llm ? new OpenAiCompatibleAgent(config.llm) : new OfflineAgent()),
        sealer,
        // A chatbot's own endpoint is a customer's choice: in production it is reached only at public addresses.
        config.production ? publicOnlyPost() : undefined,
      ),
      tracer,
    ),
    clock,
    idleCloseSeconds: config.idleCloseSeconds,
    isPersonOf: (accountId, email) => team.isPersonOf(accountId, email),
  });
  const notes = new ConversationNotes({ ...store, events, transaction, log: eventLog, clock });
  const development = targets.development;
  const webhooks = new WebhookService({ ...store, clock, sealer, policy: targets, audit });
  const forget = (ids: readonly string[] | undefined) => conversations.forget(ids);
  const privacy = new PrivacyService({ store, transaction, clock, log: eventLog, audit, forget });
  const retention = new RetentionSchedule({
    privacy,
    audit,
    intervalMs: config.retentionIntervalSeconds * 1000,
    exclusive: (name, fn) => store.exclusive(name, fn),
    onError: (e) => log.warn("retention run", { error: e instanceof Error ? e.message : String(e) }),
  });
  // Conversations erased or expired through another instance leave this one's caches too.
  const stopErasureWatch = await store.onConversationsErased(forget);
  const w = config.webhooks;
  const metrics = new Metrics({
    storeStats: () => store.stats(),
    pageCache: () => conversations.pageCacheCounts,
    processDefaults: config.metricsToken !== undefined,
  });
  const dispatcher =
    o.dispatch === false
      ? undefined
      : new Dispatcher({
          store,
          log: eventLog,
          clock,
          sealer,
          send: observedSend(o.webhookSend ?? httpSender({ development, timeoutMs: w.timeoutMs }), metrics, tracer),
          sign: standardSign,
          render: eventBody,
          settings: {
            retryDelaysMs: w.retryDelaysMs,
            disableAfterMs: w.disableAfterSeconds * 1000,
            // Renewed while its attempt runs: a claim of an instance killed mid-attempt lapses within 3 s.
            leaseMs: 3000,
            pollMs: w.pollMs,
            batch: 20,
            retentionMs: w.retentionDays * 86400_000,
          },
          onError: (e) => log.warn("webhook dispatcher", { error: e instanceof Error ? e.message : String(e) }),
        });
  const auth = new Authenticator(tokens);
  // Every service passes the gate of its declared access, then waits for durability: the Connect routes and the
  // JSON routes both serve these bindings, so no protocol can reach a handler around them.
  const bind = (desc: ServiceBinding["desc"], handlers: object): ServiceBinding => ({
    desc,
    // The contract's field rules first: a request they refuse reaches no store, not even the access gate's lookups.
    handlers: withFieldRules(desc, durable(guardService(desc, handlers as never, auth, streams))),
  });
  // Invitation links are whole addresses, to paste into an e-mail: the public address configured, else this server's.
  let listeningUrl: string | undefined;
  const bindings: ServiceBinding[] = [
    bind(TokenServiceDesc, tokenHandlers(tokens, limits, log)),
    bind(ConversationServiceDesc, conversationHandlers(conversations, { limits: watchLimits, clock }, notes)),
    bind(
      AccountServiceDesc,
      accountHandlers({
        accounts,
        team,
        tokens,
        profiles,
        defaultGraceSeconds: config.apiKeyGraceSeconds,
        consoleUrl: () => `${(config.appUrl ?? config.baseUrl ?? listeningUrl ?? "").replace(/\/+$/, "")}/console`,
        privacy: privacyHandlers({ privacy, audit }),
        savedReplies: savedReplyHandlers(new SavedReplies({ ...store, clock })),
      }),
    ),
    bind(WebhookServiceDesc, webhookHandlers(webhooks)),
    bind(SessionServiceDesc, sessionHandlers(sessions)),
  ];
  const observer = new RpcObserver(metrics, tracer);
  const connect = connectNodeAdapter({
    routes: createConnectRoutes(bindings, log, observer),
    readMaxBytes: MAX_BODY_BYTES,
    contextValues: (req) => createContextValues().set(peerKey, req.socket?.remoteAddress ?? ""),
    fallback: (req, res) =>
      sendJson(res as HttpResponse, 404, {
        code: "not_found",
        message: `no route for ${req.method} ${(req.url ?? "").split("?")[0]}`,
        details: [],
      }),
  });
  const app: App = {
    config,
    store,
    keys,
    tokens,
    tokenGuard: limits,
    accounts,
    team,
    sessions,
    conversations,
    webhooks,
    eventLog,
    dispatcher,
    audit,
    privacy,
    retention,
    bindings,
    metrics,
    log,
    handler: () => undefined,
    events,
    watchLimits,
    streams,
    listen: async () => {
      dispatcher?.start();
      retention.start();
      const server = await listen(
        app.handler,
        config.port,
        config.host,
        config.http,
        (path) => WATCH_PATHS.has(path),
        log,
      );
      listeningUrl = server.url;
      return {
        ...server,
        // Watch streams never finish by themselves: they end first, so shutdown waits only for real requests.
        close: async (graceMs) => {
          streams.close();
          events.close();
          await dispatcher?.close();
          await retention.close();
          return server.close(graceMs);
        },
      };
    },
    close: async () => {
      await dispatcher?.close();
      await retention.close();
      stopKeyWatch();
      stopErasureWatch();
      streams.close();
      events.close();
      await store.close();
    },
  };
  const routes: Route[] = [
    opsRoutes({ keys, ready: () => store.ready() }),
    metricsRoute(metrics, config.metricsToken),
    docsRoutes(),
    ...(o.extraRoutes?.(app) ?? []),
    createTranscoder(bindings, { maxBodyBytes: MAX_BODY_BYTES, log, observer }),
    connectRoute(connect as never),
  ];
  app.handler = withAccessLog(chain(routes, config.http), log, config.logLevel === "debug");
  return app;
}
