import type { OperatorPictureRepository } from "./account/operator-picture.js";
import type { OperatorProfileRepository } from "./account/operator-profile.js";
import type {
  AccountRepository,
  ApiKeyRepository,
  ChatbotRepository,
  DemoSetupRepository,
  InvitationRepository,
  MemberRepository,
} from "./account/repository.js";
import type { SavedReplyRepository } from "./account/saved-replies.js";
import type { TeamRepository } from "./account/teams.js";
import type { ToolApprovalRepository } from "./agent/approvals.js";
import type { AgentDraftRepository } from "./agent/drafts.js";
import type { AgentRepository } from "./agent/tools.js";
import type { AuditRepository } from "./audit/repository.js";
import type { BulkLoader } from "./bulk.js";
import type { LabelRepository } from "./conversation/labels.js";
import type { MentionAlertRepository, MentionRepository } from "./conversation/mentions.js";
import type { ReplyRepository } from "./conversation/replies.js";
import type {
  ActivityRepository,
  AttachmentRepository,
  ContactRepository,
  ConversationRepository,
  NoteRepository,
  RatingRepository,
  TimerRepository,
} from "./conversation/repository.js";
import type { PresenceRepository, RoutingRepository } from "./conversation/routing.js";
import type { SearchRepository } from "./conversation/search.js";
import type { IdempotencyRepository } from "./idempotency/repository.js";
import type { KnowledgeRepository } from "./knowledge/source.js";
import type { ConversationEvent, PlacedEntries } from "./log/events.js";
import type { EventRepository } from "./log/repository.js";
import type { MailRepository } from "./mail/repository.js";
import type { PrivacyRepository } from "./privacy/repository.js";
import type { ReportRepository } from "./report/report.js";
import type { CredentialChangeRepository } from "./token/credential-changes.js";
import type {
  LaunchCodeRepository,
  RefreshTokenRepository,
  SessionIssue,
  SessionIssued,
  SigningKeyRepository,
} from "./token/repository.js";
import type { TypingChannel } from "./typing/channel.js";
import type { Transact as TransactOf, UnitOptions } from "./unit.js";
import type { WebhookRepository } from "./webhook/repository.js";

export type { UnitOptions };

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
  /** Pending invitations, each account's own. */
  invitations: InvitationRepository;
  /** The people's display names and pictures. */
  profiles: OperatorProfileRepository;
  /** The people's uploaded pictures (beside their profiles). */
  pictures: OperatorPictureRepository;
  /** The files sent with messages (each its message's). */
  attachments: AttachmentRepository;
  /** Internal notes on conversations. */
  notes: NoteRepository;
  /** Who the notes mention, read by each person's Mentions. */
  mentions: MentionRepository;
  /** Whether each person wants an e-mail when mentioned. */
  mentionAlerts: MentionAlertRepository;
  /** The conversations' timelines (who took, released, closed…). */
  activities: ActivityRepository;
  /** The accounts' canned answers. */
  savedReplies: SavedReplyRepository;
  /** The accounts' teams: their members and chatbots. */
  teams: TeamRepository;
  /** Auto-assignment's reads and writes (a team's lock, loads, waiting conversations). */
  routing: RoutingRepository;
  /** Who is in the console now, and who is away. */
  presence: PresenceRepository;
  events: EventRepository;
  webhooks: WebhookRepository;
  idempotency: IdempotencyRepository;
  audit: AuditRepository;
  privacy: PrivacyRepository;
  /** The customers' ratings of closed conversations. */
  ratings: RatingRepository;
  /** Claims of the AI agent's replies, one per answered customer message. */
  replies: ReplyRepository;
  /** The rows behind the reports (read only). */
  reports: ReportRepository;
  /** Changes of what credential checks read, in commit order: open streams follow them (stream-guard.ts). */
  credentialChanges: CredentialChangeRepository;
  /** Chatbots' knowledge sources and their indexed passages. */
  knowledge: KnowledgeRepository;
  /** Agent tools and settings, daily model usage, conversations handed over to the team. */
  agents: AgentRepository;
  /** Tool calls waiting for a person's approval. */
  approvals: ToolApprovalRepository;
  /** Drafts of chatbots' agents, replayed before they are published. */
  drafts: AgentDraftRepository;
  /** The e-mail outbox (domain/mail). */
  mail: MailRepository;
  /** Full-text search over messages and notes. */
  search: SearchRepository;
  /** The accounts' labels and the conversations that carry them. */
  labels: LabelRepository;
  /** The conversations' snoozes and first-response SLA clocks. */
  timers: TimerRepository;
}

/**
 * Told which logs advanced: each account's and conversation's ("" for an account's own events), or undefined when
 * anything may have. It carries no events: a follower reads the log from its own position. `deliveries` is false
 * only when the appends are known to have recorded no webhook delivery (nothing new for a dispatcher to claim).
 */
export type LogAdvanced = (
  changes: readonly ConversationEvent[] | undefined,
  deliveries: boolean,
  /** What this process's placing put in the log, where the back end has it at hand (events.ts, PlacedEntries). */
  placed?: PlacedEntries,
) => void;

/** Runs fn as one unit of work over every repository (satisfies each use case's `Transact<R>`). */
export type Transact = TransactOf<Repositories>;

/**
 * The storage port, owned by the domain: the domain and the protocol never learn which back end runs. Faults of
 * the back end (busy, full, unreachable) reach callers as DomainError `unavailable` with a retry delay.
 */
/**
 * What `Store.durable()` answers when nothing waits for the disk: a caller that waits per item (every streamed event
 * of every stream) compares against it and adds no reaction of its own.
 */
export const DURABLE: Promise<void> = Promise.resolve();

export interface Store extends Repositories {
  transaction: Transact;
  /**
   * Resolves once every write committed so far is durable (a back end that fsyncs per commit resolves at once):
   * `DURABLE` when nothing is to be waited for; callers asking while the same writes wait share one promise.
   */
  durable(): Promise<void>;
  /**
   * Issues a session for an API key already seen valid, checking in the same unit of work (PostgreSQL: in the same
   * statement, one round trip) that the key is usable at `token.createdAt` (not revoked, its rotation grace not
   * over), that it belongs to `token.accountId`, that the account is active and that the chatbot is the account's
   * and active; only then inserts the refresh token and ensures the contact of (account, user) with no profile
   * (ContactRepository.ensure). Refused, it writes nothing. Durable as a unit of work's commit.
   */
  issueSession(s: SessionIssue): Promise<SessionIssued>;
  /** True while the back end answers a trivial query (the readiness probe). */
  ready(): Promise<boolean>;
  /** Flushes and closes; nothing may use the store afterwards. */
  close(): Promise<void>;
  /** What the metrics show of the back end, read at each scrape. */
  stats(): Promise<StoreStats>;
  /**
   * Calls `advanced` after every commit that appended to an event log (the outbox): this process's, once the unit
   * of work committed, and another process's where the back end can tell (PostgreSQL: a NOTIFY sent inside the
   * appending unit, so heard only if it committed); with undefined when announcements may have been lost (the
   * channel reconnected). Returns a function that stops it. It is the one wake-up of watchers and dispatchers.
   */
  onLogAdvanced(advanced: LogAdvanced): Promise<() => void>;
  /** Typing signals shared by every instance on this store, over `local` (this process's own listeners). */
  sharedTyping(local: TypingChannel & { close(): void }): Promise<TypingChannel & { close(): void }>;
  /**
   * Calls `changed` whenever another process may have rotated the signing keys, where the back end can tell
   * (PostgreSQL NOTIFY); returns a function that stops it. A back end that cannot tell never calls it, and key
   * rings find a rotation on their refresh interval.
   */
  onSigningKeysChanged(changed: () => void): Promise<() => void>;
  /**
   * Calls `changed` whenever another process may have recorded a credential change, where the back end can tell
   * (PostgreSQL NOTIFY, sent by the recording trigger: heard only on commit), and after a lost connection; returns
   * a function that stops it. A back end that cannot tell never calls it: readers find changes on their interval.
   */
  onCredentialsChanged(changed: () => void): Promise<() => void>;
  /**
   * Calls `erased` with the ids of conversations another process erased or expired (undefined: any may have gone,
   * after a lost connection), where the back end can tell (PostgreSQL NOTIFY); returns a function that stops it.
   * A back end of one process (SQLite) never calls it: its own caches are told directly.
   */
  onConversationsErased(erased: (conversationIds: string[] | undefined) => void): Promise<() => void>;
  /**
   * Runs fn only if no other process runs the same `name` now (PostgreSQL: a session advisory lock), answering
   * undefined without running it otherwise. On a back end of one process (SQLite) fn just runs.
   */
  exclusive<T>(name: string, fn: () => Promise<T>): Promise<T | undefined>;
  /** A loader of synthetic data for benchmarks; a back end without one throws saying so. */
  bulkLoader(): Promise<BulkLoader>;
}

/** The back end's load and the webhook outbox, for the metrics (docs/operations.md). */
export interface StoreStats {
  /** Connections running a statement or a unit of work (SQLite: 1 while the writer lock is held). */
  poolInUse: number;
  /** Callers waiting for a connection (SQLite: for the writer lock). */
  poolWaiting: number;
  /** Units of work run again after a serialization conflict, since start (SQLite: never). */
  unitRetries: number;
  /** Webhook deliveries still to be made, by any instance. */
  outboxPending: number;
  /** When the oldest of them was queued (ms since the epoch); null when none is. */
  outboxOldestAt: number | null;
}

/** Storage that cannot be opened or is not ours; start-up fails loudly with it. */
export class StoreOpenError extends Error {
  override readonly name: string = "StoreOpenError";
}
