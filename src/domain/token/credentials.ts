import { apiKeyUsable, LAST_USED_RESOLUTION_MS } from "../account/api-keys.js";
import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRepository,
  ChatbotRepository,
  MemberRepository,
} from "../account/repository.js";
import type { TeamRepository } from "../account/teams.js";
import type { AuditLog, AuditTx } from "../audit/audit-log.js";
import type { Clock } from "../clock.js";
import type { ContactRepository } from "../conversation/repository.js";
import { DomainError, invalidArgument } from "../errors.js";
import { hashSecret, requireUuid, sameHash } from "../ids.js";
import type { EventLog, LogTx } from "../log/event-log.js";
import type { Transact } from "../unit.js";
import { requireId } from "../validate.js";
import type { JwtStrategy } from "./jwt-strategy.js";
import type {
  LaunchCodeRepository,
  RefreshTokenRecord,
  RefreshTokenRepository,
  SessionIssue,
  SessionIssued,
} from "./repository.js";
import { successorSecret } from "./rotation.js";

/** Prefix of every refresh token, so a leaked one is recognisable. */
export const REFRESH_TOKEN_PREFIX = "rt_";
/** Prefix of every launch code. */
export const LAUNCH_CODE_PREFIX = "lc_";
/** How long a launch code works, milliseconds. */
export const LAUNCH_CODE_TTL_MS = 60_000;
/** Longest API key looked up (longer ones are not keys this service made). */
export const MAX_API_KEY = 512;
/** Longest User-Agent kept with a session. */
const MAX_USER_AGENT = 256;

/** The refresh token that replaces `token` in a rotation with this salt. */
export function deriveSuccessor(token: string, salt: string): string {
  return REFRESH_TOKEN_PREFIX + successorSecret(token, salt);
}

/** Token lifetimes, in seconds. */
export interface TokenLifetimes {
  access: number;
  refresh: number;
  id: number;
}

/** What the token use cases write in their units of work. */
export interface TokenTx extends AuditTx, LogTx {
  refreshTokens: RefreshTokenRepository;
  launchCodes: LaunchCodeRepository;
  contacts: ContactRepository;
}

/** What the token use cases need. */
export interface TokenServiceDeps {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  chatbots: ChatbotRepository;
  members: MemberRepository;
  /** The teams: which chatbots an operator does not see (absent: every operator sees every chatbot). */
  teams?: Pick<TeamRepository, "hiddenFor">;
  refreshTokens: RefreshTokenRepository;
  launchCodes: LaunchCodeRepository;
  contacts: ContactRepository;
  jwt: JwtStrategy;
  clock: Clock;
  ttl: TokenLifetimes;
  /** Runs fn as one storage transaction, so an issuance writes all its rows or none. */
  transaction: Transact<TokenTx>;
  /**
   * Called once a credential is known good and before anything is written; throws to refuse (per-account limits).
   * For an API key this instance has already seen valid, a token issue calls it before the key's check (which then
   * runs in the issuing statement itself, Store.issueSession): a call that check refuses hands its count back
   * (`admitRefused`).
   */
  admit?: (accountId: string) => Promise<void>;
  /** Takes back what `admit` counted for a call its key's check refused afterwards. */
  admitRefused?: (accountId: string) => Promise<void>;
  /** Store.issueSession: absent, every issue reads the key first (two round trips on PostgreSQL). */
  issueSession?: (s: SessionIssue) => Promise<SessionIssued>;
  /** The account's event log: a revocation records `session.revoked` in its own unit of work. */
  log?: EventLog;
  /** The accounts' audit log: sign-ins and revocations. */
  audit?: AuditLog;
}

/** The user and chatbot a frame call names, checked (the user's id first, as every frame call reports them). */
export function frameIds(input: { userId: string; chatbotId: string }): { userId: string; chatbotId: string } {
  return { userId: requireId("user_id", input.userId), chatbotId: requireUuid("chatbot_id", input.chatbotId) };
}

/** A longest password accepted: scrypt hashes anything, but there is no reason to hash a megabyte. */
export const MAX_PASSWORD = 1024;

/**
 * A credential this service never issued, or one presented for something it is not bound to: the mark of
 * guessing, which the abuse limits count. Its message is the same as every other credential failure's.
 */
export class UnknownCredentialError extends DomainError {
  constructor(message: string, reason: "TokenInvalidError" | "TokenRevokedError" = "TokenInvalidError") {
    super("unauthenticated", message, { reason });
  }
}

/**
 * The API key presented is one the account revoked (or whose rotation grace has ended). Said as such (reason
 * TokenRevokedError): only its holder can present it, so this tells nobody else anything, and it sends the developer
 * to the key rather than to the chatbot id.
 */
export const REVOKED_KEY = "client_api_key has been revoked: create a new key (or use the one that replaced it)";

/** Guard for UnknownCredentialError. */
export function isUnknownCredential(e: unknown): e is UnknownCredentialError {
  return e instanceof UnknownCredentialError;
}

/** A new access and refresh token pair. */
export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  accessTokenExpiresAt: number;
  refreshTokenExpiresAt: number;
  /** The session the refresh token is. */
  sessionId: string;
  /** The one-time launch code, when one was asked for. */
  launchCode?: { code: string; expiresAt: number; origin: string };
}

/** A new access token from a refresh token; with rotation, also the refresh token to use next. */
export interface RefreshedTokens {
  accessToken: string;
  expiresAt: number;
  refreshToken?: { token: string; expiresAt: number };
}

/** A launch code refused: why, for the log (the caller sees only that it is not valid). */
export class LaunchRefusedError extends DomainError {
  constructor(
    readonly why: "unknown" | "used" | "expired" | "origin" | "chatbot" | "session",
    message: string,
  ) {
    super("unauthenticated", message, { reason: "TokenInvalidError" });
  }
}

// One message for every way a key/chatbot pair can be wrong, so none of them can be told apart.
export const BAD_KEY = "client_api_key is not valid for this chatbot_id";
export const BAD_REFRESH = "refresh_token is not valid for this user_id and chatbot_id";
export const BAD_LAUNCH = "launch_code is not valid: ask the page that embeds this chat to open it again";
export const BAD_ID_CREDENTIAL = "user_email_id and credential do not match";
// A well-formed hash no password matches: verified against when there is no real one, so timing tells nothing.
export const UNUSABLE_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/**
 * Records a use of a session; advisory, so a busy database does not fail the request it describes. Like an API
 * key's, the last use is kept to the minute: a refresh that would change nothing else writes nothing within it.
 */
export async function touchSession(
  d: Pick<TokenServiceDeps, "refreshTokens">,
  sessionId: string,
  at: number,
  origin: string | null,
  userAgent: string | undefined,
  known?: RefreshTokenRecord,
) {
  const agent = userAgentOf(userAgent);
  if (
    known &&
    at - known.lastUsedAt < LAST_USED_RESOLUTION_MS &&
    (origin === null || origin === known.lastOrigin) &&
    (agent === null || agent === known.userAgent)
  )
    return;
  try {
    await d.refreshTokens.touch(sessionId, at, origin, agent);
  } catch {
    // The last-use mark is advisory.
  }
}

/**
 * The account of a usable API key, and a function that records its use: called only once the whole request is
 * accepted, so a refused request (the key of another chatbot's account, say) writes nothing.
 */
export async function accountForKey(
  d: Pick<TokenServiceDeps, "apiKeys" | "clock">,
  key: string,
  hash = key.length > MAX_API_KEY ? "" : hashSecret(key),
): Promise<(AccountRecord & { apiKeyId: string; markUsed(): Promise<void> | undefined }) | undefined> {
  if (key.length > MAX_API_KEY) return undefined;
  // The key and its account in one read (one statement, one round trip).
  const found = await d.apiKeys.byHashWithAccount(hash);
  const now = d.clock.now();
  if (!found || !sameHash(found.key.keyHash, hash)) return undefined;
  const { key: rec, account } = found;
  if (!apiKeyUsable(rec, now)) throw new UnknownCredentialError(REVOKED_KEY, "TokenRevokedError");
  if (!account?.active) return undefined;
  const markUsed = () => markKeyUsed(d, rec.apiKeyId, rec.lastUsedAt, now);
  // Written out, not `{ ...account, apiKeyId, markUsed }`: V8 adds the properties after a spread on its slow path
  // (about 2 µs here, on every token issue).
  return {
    accountId: account.accountId,
    email: account.email,
    passwordHash: account.passwordHash,
    active: account.active,
    createdAt: account.createdAt,
    apiKeyId: rec.apiKeyId,
    markUsed,
  };
}

/**
 * The API key's last use, to the minute: undefined, not a promise, when the mark is already within its resolution
 * (nearly every call: nothing to await). Advisory: a busy database must not fail the request it describes.
 */
export function markKeyUsed(
  d: Pick<TokenServiceDeps, "apiKeys">,
  apiKeyId: string,
  lastUsedAt: number | null,
  now: number,
): Promise<void> | undefined {
  if (lastUsedAt !== null && now - lastUsedAt < LAST_USED_RESOLUTION_MS) return undefined;
  return d.apiKeys.touch(apiKeyId, now, now - LAST_USED_RESOLUTION_MS).catch(() => undefined);
}

/**
 * Store.issueSession's checks and writes, for a back end that makes them in one unit of work (SQLite; PostgreSQL
 * makes them in one statement): the key usable at the session's instant and the session's account's, the account
 * active, the chatbot the account's and active, and a launch code's origin one the chatbot allows; only then the
 * refresh token inserted, the launch code with it, and the contact ensured with the profile. Refused, it writes
 * nothing. Only `tx` is called and no event appended: a self-contained unit.
 */
export async function issueSessionIn(
  tx: Pick<TokenServiceDeps, "apiKeys" | "chatbots"> & Pick<TokenTx, "contacts" | "launchCodes" | "refreshTokens">,
  s: SessionIssue,
): Promise<SessionIssued> {
  const t = s.token;
  const found = await tx.apiKeys.byHashWithAccount(s.keyHash);
  if (!found || found.key.keyHash !== s.keyHash || found.key.accountId !== t.accountId)
    return { issued: false, revoked: false };
  if (!apiKeyUsable(found.key, t.createdAt)) return { issued: false, revoked: true };
  if (!found.account?.active) return { issued: false, revoked: false };
  const chatbot = await tx.chatbots.byId(t.chatbotId);
  if (!chatbot || chatbot.accountId !== t.accountId || !chatbot.active) return { issued: false, revoked: false };
  const launchOrigin = s.launch && allowedOrigin(chatbot.allowedOrigins, s.launch.embedOrigin);
  if (launchOrigin === null) return { issued: false, revoked: false, allowedOrigins: chatbot.allowedOrigins };
  await tx.refreshTokens.insert(t);
  if (s.launch && launchOrigin)
    await tx.launchCodes.insert({
      codeHash: s.launch.codeHash,
      accountId: t.accountId,
      chatbotId: t.chatbotId,
      userId: t.userId,
      sessionId: t.sessionId,
      origin: launchOrigin,
      createdAt: t.createdAt,
      expiresAt: s.launch.expiresAt,
      usedAt: null,
    });
  await tx.contacts.ensure(t.accountId, t.userId, s.profile, t.createdAt);
  return { issued: true, apiKeyId: found.key.apiKeyId, keyLastUsedAt: found.key.lastUsedAt, launchOrigin };
}

/** embedOrigin's answer, or null where it refuses (the caller says why with embedOrigin itself). */
function allowedOrigin(allowed: readonly string[], asked: string): string | null {
  if (asked === "") return allowed.length === 1 ? allowed[0]! : null;
  const origin = originOf(asked);
  return origin && allowed.includes(origin) ? origin : null;
}

/** The origin a launch code is bound to: the one asked for, which must be allowed, or the chatbot's only one. */
export function embedOrigin(allowed: readonly string[], asked: string): string {
  const origin = allowedOrigin(allowed, asked);
  if (origin !== null) return origin;
  if (asked === "")
    throw invalidArgument("embed_origin", "is required with launch_code: the chatbot has several allowed origins");
  throw invalidArgument("embed_origin", "must be one of the chatbot's allowed origins");
}

/** scheme://host[:port] of an absolute http(s) address; undefined for anything else. */
export function originOf(s: string): string | undefined {
  try {
    const u = new URL(s);
    return u.protocol === "https:" || u.protocol === "http:" ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A User-Agent as kept with a session: printable, bounded; null when none was sent. */
export function userAgentOf(ua: string | undefined): string | null {
  if (!ua) return null;
  return ua.replace(/[^\x20-\x7e]/g, "").slice(0, MAX_USER_AGENT);
}
