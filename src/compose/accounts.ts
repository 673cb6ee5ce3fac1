import { AccountService } from "../domain/account/account-service.js";
import { ChatbotPictures } from "../domain/account/chatbot-picture.js";
import { OperatorPictures } from "../domain/account/operator-picture.js";
import { OperatorProfiles } from "../domain/account/operator-profile.js";
import { SavedReplies } from "../domain/account/saved-replies.js";
import { TeamService } from "../domain/account/team-service.js";
import { Teams } from "../domain/account/teams.js";
import type { AuditLog } from "../domain/audit/audit-log.js";
import { KnowledgeService } from "../domain/knowledge/knowledge-service.js";
import { OperatorReports } from "../domain/report/operators.js";
import { Reports } from "../domain/report/report.js";
import type { Repositories } from "../domain/store.js";
import type { KeySealer } from "../domain/token/key-sealer.js";
import { SessionRegistry } from "../domain/token/session-registry.js";
import type { TokenService } from "../domain/token/token-service.js";
import { checkTarget, type Resolve, type TargetPolicy } from "../domain/webhook/target-policy.js";
import { openAiEmbedder } from "../knowledge/embeddings.js";
import { knowledgeReader } from "../knowledge/reader.js";
import { ExtractWorker } from "../knowledge/worker-pool.js";
import { isPublicAddress } from "../webhooks/addresses.js";
import { resolveAll, withLiterals } from "../webhooks/resolve.js";
import type { Base } from "./base.js";

export interface AccountDeps {
  sealer: KeySealer;
  audit: AuditLog<Repositories>;
  tokens: TokenService;
  /** How endpoint host names are resolved when saved (a test may answer private addresses). */
  resolve: Resolve | undefined;
}

export interface AccountParts {
  accounts: AccountService;
  team: TeamService;
  profiles: OperatorProfiles;
  /** The people's uploaded pictures (served to customers' frames). */
  pictures: OperatorPictures;
  /** The chatbots' agent pictures (served to customers' frames). */
  chatbotPictures: ChatbotPictures;
  /** The account's canned answers. */
  savedReplies: SavedReplies;
  /** The account's teams: who sees which chatbots, and how their conversations are assigned. */
  teams: Teams;
  /** Each chatbot's figures over a period. */
  reports: Reports;
  operatorReports: OperatorReports;
  /** The registry of customers' sessions (refresh tokens) and their rotation policies. */
  sessions: SessionRegistry;
  /** Who an outgoing request (a webhook, a chatbot's agent endpoint) may reach. */
  targets: TargetPolicy;
  /** The chatbots' knowledge sources, their background indexing and the search the agents answer from. */
  knowledge: KnowledgeService;
  /** The worker thread documents are read in (closed at stop). */
  extractWorker: ExtractWorker;
}

/** Accounts, their chatbots and keys, the team, people's profiles and customers' sessions. */
export function composeAccounts(b: Base, d: AccountDeps): AccountParts {
  const { config, store, clock, transaction } = b;
  const { sealer, audit } = d;
  // Who an outgoing request (a webhook, a chatbot's agent endpoint) may reach: public addresses only in production.
  const targets: TargetPolicy = {
    development: !config.production,
    resolve: withLiterals(d.resolve ?? resolveAll),
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
  const team = new TeamService({
    ...store,
    transaction,
    clock,
    audit,
    revoke: (ids, keep) => d.tokens.revocations.revokeLineage(ids, keep),
  });
  const profiles = new OperatorProfiles({ profiles: store.profiles, clock });
  const pictures = new OperatorPictures({ pictures: store.pictures, clock });
  const chatbotPictures = new ChatbotPictures({ accounts, chatbots: store.chatbots });
  const sessions = new SessionRegistry({
    refreshTokens: store.refreshTokens,
    clock,
    chatbotOf: (caller, chatbotId) => accounts.chatbot(caller, chatbotId),
    audit,
  });
  const savedReplies = new SavedReplies({ ...store, clock });
  const teams = new Teams({ ...store, clock, transaction, audit });
  const reports = new Reports({ ...store, clock, idleCloseSeconds: config.idleCloseSeconds });
  const operatorReports = new OperatorReports(store);
  const extractWorker = new ExtractWorker();
  const knowledge = new KnowledgeService({
    knowledge: store.knowledge,
    clock,
    chatbotOf: (caller, chatbotId) => accounts.chatbot(caller, chatbotId),
    chatbotById: (chatbotId) => store.chatbots.byId(chatbotId),
    // Outside production any address may be fetched (a local help centre); in production public ones only, checked
    // when given and again at every connection.
    reader: knowledgeReader({ worker: extractWorker, fetch: { development: !config.production } }),
    exclusive: (name, fn) => store.exclusive(name, fn),
    onError: (sourceId, e) =>
      b.log.error("knowledge indexing failed", { sourceId, error: e instanceof Error ? e.message : String(e) }),
    ...(config.production
      ? { checkUrl: async (field: string, url: string) => void (await checkTarget(field, url, targets)) }
      : {}),
    embedder: config.embeddings && openAiEmbedder(config.embeddings, { development: !config.production }),
    onEmbeddingError: (e) =>
      b.log.warn("knowledge embeddings failed; BM25 alone", { error: e instanceof Error ? e.message : String(e) }),
  });
  return {
    accounts,
    team,
    profiles,
    pictures,
    chatbotPictures,
    savedReplies,
    teams,
    reports,
    operatorReports,
    sessions,
    targets,
    knowledge,
    extractWorker,
  };
}
