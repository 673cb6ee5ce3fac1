import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { ConversationService as ConversationServiceDesc } from "../gen/aiagent/v1/conversation_service_pb.js";
import { TokenService as TokenServiceDesc } from "../gen/aiagent/v1/token_service_pb.js";
import { OpenAiCompatibleAgent } from "./agents/openai-compatible.js";
import { type Config, ConfigError } from "./config.js";
import { AccountService } from "./domain/account/account-service.js";
import type { Agent } from "./domain/agent/agent.js";
import { OfflineAgent } from "./domain/agent/offline-agent.js";
import { type Clock, systemClock } from "./domain/clock.js";
import { ConversationService } from "./domain/conversation/conversation-service.js";
import type { ConversationEvents } from "./domain/conversation/events.js";
import type { Store } from "./domain/store.js";
import { JwtStrategy } from "./domain/token/jwt-strategy.js";
import { KeyRing } from "./domain/token/key-ring.js";
import { KeySealError } from "./domain/token/key-sealer.js";
import { TokenService } from "./domain/token/token-service.js";
import { InProcessConversationEvents } from "./events/in-process.js";
import { keySealer } from "./key-encryption.js";
import type { Logger } from "./log.js";
import { Authenticator } from "./protocol/auth.js";
import type { AnyHandler } from "./protocol/call.js";
import { parseErrorsAsInvalidArgument } from "./protocol/connect-parse-errors.js";
import { createConnectRoutes, peerKey } from "./protocol/connect-routes.js";
import { durableHandlers } from "./protocol/durable.js";
import { withAccessLog } from "./protocol/http/access-log.js";
import { docsRoutes } from "./protocol/http/docs-routes.js";
import { opsRoutes } from "./protocol/http/ops-routes.js";
import { chain, listen, type RunningServer } from "./protocol/http/server.js";
import { type HttpRequest, type HttpResponse, type Route, sendJson } from "./protocol/http/types.js";
import { type CounterStore, limiterCounter, memoryStore } from "./protocol/rate-limit.js";
import { createTranscoder, type ServiceBinding } from "./protocol/rest/transcoder.js";
import { conversationHandlers } from "./protocol/services/conversation-handlers.js";
import { tokenHandlers } from "./protocol/services/token-handlers.js";
import { noTokenLimits, tokenLimits } from "./protocol/token-limits.js";
import { WatchLimits } from "./protocol/watch-limits.js";
import { type Fsync, openStore } from "./storage/open.js";
import { PgStore, pgRateLimiter } from "./storage/postgres/index.js";

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
}

/** The wired service: storage, domain and protocol, not yet listening. */
export interface App {
  config: Config;
  /** The storage port; which back end runs is known only to src/storage. */
  store: Store;
  keys: KeyRing;
  tokens: TokenService;
  accounts: AccountService;
  conversations: ConversationService;
  /** Live updates of conversations (the watch streams subscribe here). */
  events: ConversationEvents & { close(): void };
  watchLimits: WatchLimits;
  bindings: ServiceBinding[];
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
  const store = await openStore(config, o.fsync ? { fsync: o.fsync } : {});
  const durable = (h: Record<string, AnyHandler>) => durableHandlers(h, () => store.durable());
  const maxLifetimeMs = Math.max(config.accessTokenTtl, config.idTokenTtl) * 1000;
  let keys: KeyRing;
  try {
    keys = await KeyRing.open(store.signingKeys, clock, {
      maxTokenLifetimeMs: maxLifetimeMs,
      refreshIntervalMs: config.signingKeyRefreshSeconds * 1000,
      sealer: keySealer(config, log),
      transaction: store.transaction.bind(store),
    });
  } catch (e) {
    await store.close();
    if (e instanceof KeySealError) throw new ConfigError(`signing keys in ${config.dbPath}: ${e.message}`);
    throw e;
  }
  // On PostgreSQL a rotation anywhere is announced, and this instance signs with the new key at once.
  const stopKeyWatch = await store.onSigningKeysChanged?.(() => void keys.reload().catch(() => undefined));
  const jwt = new JwtStrategy(keys, clock, ISSUER);
  // Several instances on one PostgreSQL count the token routes' abuse limits together.
  const counters: CounterStore =
    store instanceof PgStore ? (rule) => limiterCounter(pgRateLimiter(store.pool, rule), rule) : memoryStore;
  const limits = config.rateLimit ? tokenLimits(config.rateLimit, counters) : noTokenLimits;
  const tokens = new TokenService({
    ...store,
    transaction: store.transaction.bind(store),
    jwt,
    clock,
    ttl: { access: config.accessTokenTtl, refresh: config.refreshTokenTtl, id: config.idTokenTtl },
    admit: limits.account,
  });
  const accounts = new AccountService({ ...store, clock, transaction: store.transaction.bind(store) });
  // Watchers see a change only once it is durable: the events wait for the same fsync the answers wait for.
  const local = new InProcessConversationEvents(() => store.durable());
  // Several instances on one PostgreSQL: a change written through any of them reaches every watcher.
  const events = store.sharedEvents ? await store.sharedEvents(local) : local;
  const watchLimits = new WatchLimits(config.watchStreams.perInstance, config.watchStreams.perToken);
  const conversations = new ConversationService({
    ...store,
    events,
    agent: o.agent ?? (config.llm ? new OpenAiCompatibleAgent(config.llm) : new OfflineAgent()),
    clock,
    idleCloseSeconds: config.idleCloseSeconds,
  });
  const auth = new Authenticator(tokens);
  const bindings: ServiceBinding[] = [
    {
      desc: TokenServiceDesc,
      handlers: durable(tokenHandlers(tokens, auth, limits) as unknown as Record<string, AnyHandler>),
    },
    {
      desc: ConversationServiceDesc,
      handlers: durable(
        conversationHandlers(conversations, auth, { limits: watchLimits, clock }) as unknown as Record<
          string,
          AnyHandler
        >,
      ),
    },
  ];
  const connect = connectNodeAdapter({
    routes: createConnectRoutes(bindings, log),
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
    accounts,
    conversations,
    bindings,
    log,
    handler: () => undefined,
    events,
    watchLimits,
    listen: async () => {
      const server = await listen(app.handler, config.port, config.host, config.http, (path) => WATCH_PATHS.has(path));
      return {
        ...server,
        // Watch streams never finish by themselves: they end first, so shutdown waits only for real requests.
        close: (graceMs) => {
          events.close();
          return server.close(graceMs);
        },
      };
    },
    close: async () => {
      stopKeyWatch?.();
      events.close();
      await store.close();
    },
  };
  const routes: Route[] = [
    opsRoutes({ keys, ready: () => store.ready() }),
    docsRoutes(),
    ...(o.extraRoutes?.(app) ?? []),
    createTranscoder(bindings, { maxBodyBytes: MAX_BODY_BYTES, log }),
    (req, res) => {
      connect(req as never, parseErrorsAsInvalidArgument(res) as never);
      return true;
    },
  ];
  app.handler = withAccessLog(chain(routes, config.http), log, config.logLevel === "debug");
  return app;
}
