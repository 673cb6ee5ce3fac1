import type { DescMethod } from "@bufbuild/protobuf";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { AccountService as AccountServiceDesc } from "../../gen/aiagent/v1/account_service_pb.js";
import { AgentService as AgentServiceDesc } from "../../gen/aiagent/v1/agent_service_pb.js";
import { ConsoleService as ConsoleServiceDesc } from "../../gen/aiagent/v1/console_service_pb.js";
import { ConversationService as ConversationServiceDesc } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { MailService as MailServiceDesc } from "../../gen/aiagent/v1/mail_service_pb.js";
import { SessionService as SessionServiceDesc } from "../../gen/aiagent/v1/session_service_pb.js";
import { TokenService as TokenServiceDesc } from "../../gen/aiagent/v1/token_service_pb.js";
import { WebhookService as WebhookServiceDesc } from "../../gen/aiagent/v1/webhook_service_pb.js";
import type { App } from "../app.js";
import type { ChatbotPictures } from "../domain/account/chatbot-picture.js";
import type { OperatorPictures } from "../domain/account/operator-picture.js";
import type { AuditLog } from "../domain/audit/audit-log.js";
import type { Attachments } from "../domain/conversation/attachments.js";
import type { Repositories } from "../domain/store.js";
import { DURABLE } from "../domain/store.js";
import type { KeyRing } from "../domain/token/key-ring.js";
import type { Metrics } from "../observability/metrics.js";
import { metricsRoute } from "../observability/metrics-route.js";
import { RpcObserver } from "../observability/rpc.js";
import { guardService } from "../protocol/access.js";
import { Authenticator } from "../protocol/auth.js";
import type { AnyHandler } from "../protocol/call.js";
import { connectRoute } from "../protocol/connect-parse-errors.js";
import { createConnectRoutes, peerKey } from "../protocol/connect-routes.js";
import { durableHandlers } from "../protocol/durable.js";
import type { Heartbeats } from "../protocol/heartbeats.js";
import { withAccessLog } from "../protocol/http/access-log.js";
import { attachmentRoute } from "../protocol/http/attachment-route.js";
import { docsRoutes } from "../protocol/http/docs-routes.js";
import { opsRoutes } from "../protocol/http/ops-routes.js";
import type { PageRoute } from "../protocol/http/pages.js";
import { chatbotPictureRoute, pictureRoute } from "../protocol/http/picture-route.js";
import { type RouteTable, routeTable, tableRoutes } from "../protocol/http/route-table.js";
import { chain } from "../protocol/http/server.js";
import { type HttpResponse, sendJson } from "../protocol/http/types.js";
import { withFieldRules } from "../protocol/rest/field-rules.js";
import { createTranscoder, type ServiceBinding } from "../protocol/rest/transcoder.js";
import { accountHandlers } from "../protocol/services/account-handlers.js";
import { agentHandlers } from "../protocol/services/agent-handlers.js";
import { consoleHandlers } from "../protocol/services/console-handlers.js";
import { conversationHandlers } from "../protocol/services/conversation-handlers.js";
import { knowledgeHandlers } from "../protocol/services/knowledge-handlers.js";
import { mailHandlers } from "../protocol/services/mail-handlers.js";
import { mentionHandlers } from "../protocol/services/mention-handlers.js";
import { privacyHandlers } from "../protocol/services/privacy-handlers.js";
import { savedReplyHandlers } from "../protocol/services/saved-reply-handlers.js";
import { sessionHandlers } from "../protocol/services/session-handlers.js";
import { teamHandlers } from "../protocol/services/team-handlers.js";
import { tokenHandlers } from "../protocol/services/token-handlers.js";
import { webhookHandlers } from "../protocol/services/webhook-handlers.js";
import type { AccountParts } from "./accounts.js";
import type { Base } from "./base.js";
import type { ConversationParts } from "./conversations.js";
import type { MailParts } from "./mail.js";
import type { PrivacyParts } from "./privacy.js";
import type { TimerParts } from "./timers.js";
import type { TokenParts } from "./tokens.js";
import type { WebhookParts } from "./webhooks.js";

/** Largest JSON request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The methods that take a larger body: an uploaded knowledge file (8 MiB, base64 on the JSON routes: 4/3 of it, and
 * the other fields).
 */
export const LARGE_BODIES: ReadonlyMap<DescMethod, number> = new Map([
  [AccountServiceDesc.method.createKnowledgeSource, 11 * 1024 * 1024 + 64 * 1024],
]);

/**
 * The body limits of a server: LARGE_BODIES and the attachments' (a file of at most AIAGENT_ATTACHMENT_MAX_BYTES,
 * base64 on the JSON routes, and the other fields), so an over-large file is told apart by its own check ("file must
 * be at most …") up to the base64 of the cap, and refused by the body limit beyond.
 */
export function largeBodies(attachmentMaxBytes: number): ReadonlyMap<DescMethod, number> {
  const upload = Math.ceil((attachmentMaxBytes * 4) / 3) + 64 * 1024;
  return new Map([
    ...LARGE_BODIES,
    [ConversationServiceDesc.method.sendAttachment, upload],
    [ConversationServiceDesc.method.replyWithAttachment, upload],
  ]);
}

/** The watch stream's paths: Connect/gRPC and the JSON route. */
export const WATCH_PATHS = new Set([
  `/${ConversationServiceDesc.typeName}/${ConversationServiceDesc.method.watchConversation.name}`,
  `/${ConversationServiceDesc.typeName}/${ConversationServiceDesc.method.watchAccount.name}`,
  "/watch_conversation",
  "/watch_account",
]);

export type BindingDeps = Pick<TokenParts, "tokens" | "tokenGuard"> &
  Omit<AccountParts, "targets" | "extractWorker"> &
  Omit<ConversationParts, "events"> &
  Pick<PrivacyParts, "privacy"> &
  Pick<WebhookParts, "webhooks"> &
  Pick<TimerParts, "timers"> & {
    audit: AuditLog<Repositories>;
    /** The address the server listens on, once it does (invitation links fall back to it). */
    listeningUrl: () => string | undefined;
    /** Which conversations customers have open (compose/mail.ts). */
    presence?: { enter(conversationId: string): () => void };
    /** E-mails an invitation or password link (compose/mail.ts); undefined without a relay. */
    mailLink?: MailParts["mailLink"];
    /** The customer's address, transcripts and the account's outbox (compose/mail.ts). */
    mailDesk: MailParts["mailDesk"];
  };

/** Every service behind the gate of its declared access: the Connect routes and the JSON routes both serve these. */
export function composeBindings(b: Base, d: BindingDeps): ServiceBinding[] {
  const { config, store } = b;
  const auth = new Authenticator(d.tokens.checks);
  // Nothing to wait for: no reaction added per answer or streamed item.
  const barrier = () => {
    const wait = store.durable();
    return wait === DURABLE ? undefined : wait;
  };
  const durable = (h: Record<string, AnyHandler>) => durableHandlers(h, barrier);
  // Every service passes the gate of its declared access, then waits for durability: the Connect routes and the
  // JSON routes both serve these bindings, so no protocol can reach a handler around them.
  const bind = (desc: ServiceBinding["desc"], handlers: object): ServiceBinding => ({
    desc,
    // The contract's field rules first: a request they refuse reaches no store, not even the access gate's lookups.
    handlers: withFieldRules(desc, durable(guardService(desc, handlers as never, auth, d.streams))),
  });
  // Invitation links are whole addresses, to paste into an e-mail: the public address configured, else this server's.
  const consoleUrl = () => `${(config.appUrl ?? config.baseUrl ?? d.listeningUrl() ?? "").replace(/\/+$/, "")}/console`;
  return [
    bind(TokenServiceDesc, tokenHandlers(d.tokens, d.tokenGuard, b.log)),
    bind(
      ConversationServiceDesc,
      conversationHandlers(
        d.conversations,
        { limits: d.watchLimits, clock: b.clock, heartbeats: d.heartbeats, deadlines: d.deadlines },
        d.typing,
        d.pictures,
        d.notes,
        d.activities,
        d.search,
        d.labels,
        d.timers,
        d.presence,
      ),
    ),
    bind(
      AccountServiceDesc,
      accountHandlers({
        accounts: d.accounts,
        team: d.team,
        tokens: d.tokens,
        profiles: d.profiles,
        pictures: d.pictures,
        chatbotPictures: d.chatbotPictures,
        defaultGraceSeconds: config.apiKeyGraceSeconds,
        consoleUrl,
        mailLink: d.mailLink,
        privacy: privacyHandlers({ privacy: d.privacy, audit: d.audit }),
        savedReplies: savedReplyHandlers(d.savedReplies),
        mentions: mentionHandlers(d.mentions),
        teams: teamHandlers(d.teams, d.router),
        reports: d.reports,
        operatorReports: d.operatorReports,
        knowledge: knowledgeHandlers(d.knowledge),
      }),
    ),
    bind(WebhookServiceDesc, webhookHandlers(d.webhooks)),
    bind(AgentServiceDesc, agentHandlers(d.agentTools, d.conversations.approvals, d.agentReplay)),
    bind(SessionServiceDesc, sessionHandlers(d.sessions)),
    bind(MailServiceDesc, mailHandlers(d.mailDesk)),
    bind(
      ConsoleServiceDesc,
      consoleHandlers({
        tokens: d.tokens,
        limits: d.tokenGuard,
        clock: b.clock,
        secureCookie: () => /^https:/i.test(config.appUrl ?? config.baseUrl ?? ""),
      }),
    ),
  ];
}

export interface HandlerDeps {
  keys: KeyRing;
  metrics: Metrics;
  bindings: ServiceBinding[];
  /** Pages beside the API (the frame, the demo and the console add theirs here). */
  extraRoutes: PageRoute[];
  /** What /readyz says of e-mail (compose/mail.ts). */
  mailStatus?: () => Promise<Record<string, unknown>>;
  /** The people's pictures, served at /v1/operator_pictures/{id}. */
  pictures: OperatorPictures;
  /** The chatbots' agent pictures, served at /v1/chatbot_pictures/{id}. */
  chatbotPictures: ChatbotPictures;
  /** The files sent with messages, served at /v1/attachments/{id}. */
  attachments: Pick<Attachments, "file">;
  /** The watch streams' one heartbeat timer: the JSON routes write the beats themselves. */
  heartbeats: Heartbeats;
}

/**
 * The route table (the RPCs, and the pages: operations, metrics, docs and the extra ones) and the HTTP handler built
 * from it alone: the JSON routes, the pages, then the Connect routes.
 */
export function composeHandler(b: Base, d: HandlerDeps): { handler: App["handler"]; routes: RouteTable } {
  const { config, log } = b;
  // Without a metrics token nothing reads the RPC series, and spans need a tracer: with neither, nothing is observed.
  const observer = config.metricsToken !== undefined || b.tracer ? new RpcObserver(d.metrics, b.tracer) : undefined;
  const bodies = largeBodies(config.attachmentMaxBytes);
  const connect = connectNodeAdapter({
    routes: createConnectRoutes(d.bindings, log, observer, bodies),
    readMaxBytes: MAX_BODY_BYTES,
    contextValues: (req) => createContextValues().set(peerKey, req.socket?.remoteAddress ?? ""),
    fallback: (req, res) =>
      sendJson(res as HttpResponse, 404, {
        code: "not_found",
        message: `no route for ${req.method} ${(req.url ?? "").split("?")[0]}`,
        details: [],
      }),
  });
  const table = routeTable(d.bindings, [
    ...opsRoutes({ keys: d.keys, ready: () => b.store.ready(), mail: d.mailStatus }),
    ...metricsRoute(d.metrics, config.metricsToken),
    ...docsRoutes(),
    pictureRoute(d.pictures),
    chatbotPictureRoute(d.chatbotPictures),
    attachmentRoute(d.attachments),
    ...d.extraRoutes,
  ]);
  const routes = tableRoutes(table, {
    transcoder: createTranscoder(d.bindings, {
      maxBodyBytes: MAX_BODY_BYTES,
      largeBodies: bodies,
      log,
      observer,
      stream: {
        bufferBytes: b.config.watchStreams.bufferBytes,
        stallMs: b.config.watchStreams.stallMs,
        heartbeats: d.heartbeats,
      },
    }),
    connect: connectRoute(connect as never),
  });
  return { handler: withAccessLog(chain(routes, config.http), log, config.logLevel === "debug"), routes: table };
}
