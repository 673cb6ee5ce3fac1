import type { OperatorProfileRepository } from "./account/operator-profile.js";
import type {
  AccountRepository,
  ApiKeyRepository,
  ChatbotRepository,
  DemoSetupRepository,
  MemberRepository,
} from "./account/repository.js";
import type { BulkLoader } from "./bulk.js";
import type { ConversationEvents } from "./conversation/events.js";
import type { ContactRepository, ConversationRepository } from "./conversation/repository.js";
import type { LaunchCodeRepository, RefreshTokenRepository, SigningKeyRepository } from "./token/repository.js";
import type { EventRepository, WebhookRepository } from "./webhook/repository.js";

/** Every repository the domain uses. */
export interface Repositories {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  chatbots: ChatbotRepository;
  refreshTokens: RefreshTokenRepository;
  launchCodes: LaunchCodeRepository;
  signingKeys: SigningKeyRepository;
  contacts: ContactRepository;
  conversations: ConversationRepository;
  demoSetup: DemoSetupRepository;
  members: MemberRepository;
  /** The people's display names and pictures. */
  profiles: OperatorProfileRepository;
  events: EventRepository;
  webhooks: WebhookRepository;
}

/** How a unit of work is isolated. */
export interface UnitOptions {
  /**
   * Its writes order themselves by the rows they update (each repository write is correct under concurrency on its
   * own, as a message append is), so the back end need not serialise the whole unit: concurrent writers wait for
   * each other's row locks instead of being aborted and retried (PostgreSQL: READ COMMITTED, not SERIALIZABLE).
   */
  rowLocks?: boolean;
}

/** Runs fn as one unit of work: every write in it lands, or (when it throws) none does. */
export type Transact = <T>(fn: (tx: Repositories) => Promise<T>, o?: UnitOptions) => Promise<T>;

/**
 * The storage port, owned by the domain: the domain and the protocol never learn which back end runs. Faults of
 * the back end (busy, full, unreachable) reach callers as DomainError `unavailable` with a retry delay.
 */
export interface Store extends Repositories {
  transaction: Transact;
  /** Resolves once every write committed so far is durable (a back end that fsyncs per commit resolves at once). */
  durable(): Promise<void>;
  /** True while the back end answers a trivial query (the readiness probe). */
  ready(): Promise<boolean>;
  /** Flushes and closes; nothing may use the store afterwards. */
  close(): Promise<void>;
  /**
   * Live updates shared by every instance on this store, where the back end has a channel for them (PostgreSQL
   * LISTEN/NOTIFY); `local` delivers to this instance's own watchers.
   */
  sharedEvents?(local: ConversationEvents & { close(): void }): Promise<ConversationEvents & { close(): void }>;
  /**
   * Calls `changed` whenever another process may have rotated the signing keys, where the back end can tell
   * (PostgreSQL NOTIFY); returns a function that stops it. Without it, key rings look again on their interval.
   */
  onSigningKeysChanged?(changed: () => void): Promise<() => void>;
  /** A loader of synthetic data for benchmarks, where the back end has one. */
  bulkLoader?(): BulkLoader;
}

/** Storage that cannot be opened or is not ours; start-up fails loudly with it. */
export class StoreOpenError extends Error {
  override readonly name: string = "StoreOpenError";
}
