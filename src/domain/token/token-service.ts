import { apiKeyUsable, LAST_USED_RESOLUTION_MS } from "../account/api-keys.js";
import { verifyPassword } from "../account/password.js";
import type {
  AccountRecord,
  AccountRepository,
  ApiKeyRepository,
  ChatbotRecord,
  ChatbotRepository,
  MemberRepository,
} from "../account/repository.js";
import { resolvePerson } from "../account/team-service.js";
import type { AuditActor, AuditLog } from "../audit/audit-log.js";
import type { AccountCaller, CallOrigin } from "../caller.js";
import type { Clock } from "../clock.js";
import type { ContactProfile, ContactRepository } from "../conversation/repository.js";
import { DomainError, invalidArgument, notFound, unauthenticated } from "../errors.js";
import { hashSecret, newId, newSecret, requireUuid, sameHash } from "../ids.js";
import type { Transact } from "../store.js";
import { optionalEmail, optionalText, requireId, requireText } from "../validate.js";
import type { EventLog } from "../webhook/event-log.js";
import type { AccessClaims, IdClaims, JwtStrategy } from "./jwt-strategy.js";
import { lineage, lineageOf } from "./lineage.js";
import type {
  LaunchCodeRepository,
  RefreshTokenRecord,
  RefreshTokenRepository,
  RevocationScope,
} from "./repository.js";
import { newRotationSalt, successorSecret } from "./rotation.js";

/** Prefix of every refresh token, so a leaked one is recognisable. */
export const REFRESH_TOKEN_PREFIX = "rt_";
/** Prefix of every launch code. */
export const LAUNCH_CODE_PREFIX = "lc_";
/** How long a launch code works, milliseconds. */
export const LAUNCH_CODE_TTL_MS = 60_000;
/** Longest User-Agent kept with a session. */
const MAX_USER_AGENT = 256;

/** The refresh token that replaces `token` in a rotation with this salt. */
function deriveSuccessor(token: string, salt: string): string {
  return REFRESH_TOKEN_PREFIX + successorSecret(token, salt);
}

/** Token lifetimes, in seconds. */
export interface TokenLifetimes {
  access: number;
  refresh: number;
  id: number;
}

/** What the token use cases need. */
export interface TokenServiceDeps {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  chatbots: ChatbotRepository;
  members: MemberRepository;
  refreshTokens: RefreshTokenRepository;
  launchCodes: LaunchCodeRepository;
  contacts: ContactRepository;
  jwt: JwtStrategy;
  clock: Clock;
  ttl: TokenLifetimes;
  /** Runs fn as one storage transaction, so an issuance writes all its rows or none. */
  transaction: Transact;
  /** Called once a credential is known good and before anything is written; throws to refuse (per-account limits). */
  admit?: (accountId: string) => Promise<void>;
  /** The account's event log: a revocation records `session.revoked` in its own unit of work. */
  log?: EventLog;
  /** The accounts' audit log: sign-ins and revocations. */
  audit?: AuditLog;
}

/** A longest password accepted: scrypt hashes anything, but there is no reason to hash a megabyte. */
export const MAX_PASSWORD = 1024;

/**
 * A credential this service never issued, or one presented for something it is not bound to: the mark of
 * guessing, which the abuse limits count. Its message is the same as every other credential failure's.
 */
export class UnknownCredentialError extends DomainError {
  constructor(message: string) {
    super("unauthenticated", message, { reason: "TokenInvalidError" });
  }
}

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
const BAD_KEY = "client_api_key is not valid for this chatbot_id";
const BAD_REFRESH = "refresh_token is not valid for this user_id and chatbot_id";
const BAD_LAUNCH = "launch_code is not valid: ask the page that embeds this chat to open it again";
const BAD_ID_CREDENTIAL = "user_email_id and credential do not match";
// A well-formed hash no password matches: verified against when there is no real one, so timing tells nothing.
const UNUSABLE_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/** Issues, refreshes, checks and revokes the service's tokens. */
export class TokenService {
  constructor(private readonly d: TokenServiceDeps) {}

  /** Trades an API key for an access and refresh token bound to (account, chatbot, user). */
  async getAccessToken(input: {
    userId: string;
    chatbotId: string;
    clientApiKey: string;
    contact?: ContactProfile | undefined;
    /** Also issue a one-time launch code, bound to embedOrigin (or the chatbot's only allowed origin). */
    launchCode?: boolean | undefined;
    embedOrigin?: string | undefined;
    userAgent?: string | undefined;
  }): Promise<IssuedTokens> {
    const userId = requireId("user_id", input.userId);
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    requireText("client_api_key", input.clientApiKey);
    const profile = input.contact && {
      contactName: optionalText("contact.contact_name", input.contact.contactName),
      email: optionalEmail("contact.email", input.contact.email),
      phoneNumber: optionalText("contact.phone_number", input.contact.phoneNumber),
    };
    const account = await this.accountForKey(input.clientApiKey);
    const chatbot = account && (await this.d.chatbots.byId(chatbotId));
    if (!account || !chatbot || chatbot.accountId !== account.accountId || !chatbot.active)
      throw new UnknownCredentialError(BAD_KEY);
    const launchOrigin = input.launchCode ? embedOrigin(chatbot.allowedOrigins, input.embedOrigin ?? "") : undefined;
    await this.d.admit?.(account.accountId);
    await account.markUsed();

    const now = this.d.clock.now();
    const sessionId = newId();
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    const refreshTokenExpiresAt = now + this.d.ttl.refresh * 1000;
    const launch = launchOrigin
      ? { code: newSecret(LAUNCH_CODE_PREFIX), expiresAt: now + LAUNCH_CODE_TTL_MS, origin: launchOrigin }
      : undefined;
    // Signed before anything is stored: a failure here leaves no row behind.
    const access = await this.d.jwt.signAccess(
      { accountId: account.accountId, chatbotId, userId, sessionId },
      this.d.ttl.access,
    );
    await this.d.transaction(
      async (tx) => {
        await tx.refreshTokens.insert({
          tokenHash: hashSecret(refreshToken),
          sessionId,
          accountId: account.accountId,
          chatbotId,
          userId,
          createdAt: now,
          expiresAt: refreshTokenExpiresAt,
          revokedAt: null,
          lastUsedAt: now,
          lastOrigin: "",
          userAgent: userAgentOf(input.userAgent) ?? "",
        });
        if (launch)
          await tx.launchCodes.insert({
            codeHash: hashSecret(launch.code),
            accountId: account.accountId,
            chatbotId,
            userId,
            sessionId,
            origin: launch.origin,
            createdAt: now,
            expiresAt: launch.expiresAt,
            usedAt: null,
          });
        await tx.contacts.upsert(account.accountId, userId, profile, now);
        // New rows and one upsert of the contact: concurrent first contacts wait for its row lock, none is aborted.
      },
      { rowLocks: true },
    );
    return {
      accessToken: access.token,
      refreshToken,
      accessTokenExpiresAt: access.expiresAt,
      refreshTokenExpiresAt,
      sessionId,
      ...(launch ? { launchCode: launch } : {}),
    };
  }

  /**
   * An access token for a person of the account to try one of its chatbots (the console's preview): no API key and
   * no refresh token, for the account's own active chatbot only; the preview user shows in the inbox like a customer.
   */
  async previewAccessToken(input: {
    accountId: string;
    chatbotId: string;
    userId: string;
  }): Promise<{ accessToken: string; expiresAt: number }> {
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    const userId = requireId("user_id", input.userId);
    const chatbot = await this.d.chatbots.byId(chatbotId);
    if (!chatbot || chatbot.accountId !== input.accountId || !chatbot.active)
      throw notFound("no such active chatbot in this account");
    const access = await this.d.jwt.signAccess({ accountId: input.accountId, chatbotId, userId }, this.d.ttl.access);
    await this.d.contacts.upsert(
      input.accountId,
      userId,
      { contactName: "Console preview", email: "", phoneNumber: "" },
      this.d.clock.now(),
    );
    return { accessToken: access.token, expiresAt: access.expiresAt };
  }

  /**
   * What the frame page needs to know of a launch code before the frame exchanges it: the origin it is bound to
   * (the only one that may embed the page), or why it can no longer be used. Nothing is used up.
   */
  async peekLaunchCode(
    chatbotId: string,
    launchCode: string,
  ): Promise<{ origin: string } | { refused: LaunchRefusedError["why"] }> {
    if (launchCode === "" || launchCode.length > 512) return { refused: "unknown" };
    const hash = hashSecret(launchCode);
    const code = await this.d.launchCodes.byHash(hash);
    if (!code || !sameHash(code.codeHash, hash)) return { refused: "unknown" };
    if (code.chatbotId !== chatbotId) return { refused: "chatbot" };
    if (code.usedAt !== null) return { refused: "used" };
    if (code.expiresAt <= this.d.clock.now()) return { refused: "expired" };
    return { origin: code.origin };
  }

  /**
   * The frame's one exchange of its launch code for an access token: the code must be one this service issued, for
   * this chatbot, unused, within its 60 seconds, and presented under the origin it was issued for. It is used up
   * by the first exchange that passes these checks.
   */
  async exchangeLaunchCode(input: {
    chatbotId: string;
    launchCode: string;
    embedOrigin: string;
    userAgent?: string | undefined;
  }): Promise<{ accessToken: string; expiresAt: number; userId: string }> {
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    requireText("launch_code", input.launchCode);
    requireText("embed_origin", input.embedOrigin);
    if (input.launchCode.length > 512) throw new UnknownCredentialError(BAD_LAUNCH);
    const hash = hashSecret(input.launchCode);
    const code = await this.d.launchCodes.byHash(hash);
    const now = this.d.clock.now();
    if (!code || !sameHash(code.codeHash, hash)) throw new LaunchRefusedError("unknown", BAD_LAUNCH);
    if (code.chatbotId !== chatbotId) throw new LaunchRefusedError("chatbot", BAD_LAUNCH);
    if (code.usedAt !== null) throw new LaunchRefusedError("used", BAD_LAUNCH);
    if (code.expiresAt <= now) throw new LaunchRefusedError("expired", BAD_LAUNCH);
    if (originOf(input.embedOrigin) !== code.origin) throw new LaunchRefusedError("origin", BAD_LAUNCH);
    const session = await this.d.refreshTokens.bySession(code.sessionId);
    const chatbot = await this.d.chatbots.byId(chatbotId);
    const account = await this.d.accounts.byId(code.accountId);
    if (!session || session.revokedAt !== null || session.expiresAt <= now)
      throw new LaunchRefusedError("session", BAD_LAUNCH);
    if (!chatbot?.active || chatbot.accountId !== code.accountId || !account?.active)
      throw new LaunchRefusedError("chatbot", BAD_LAUNCH);
    if (!(await this.d.launchCodes.markUsed(hash, now))) throw new LaunchRefusedError("used", BAD_LAUNCH);
    const access = await this.d.jwt.signAccess(
      { accountId: code.accountId, chatbotId, userId: code.userId, sessionId: code.sessionId },
      this.d.ttl.access,
    );
    await this.touch(code.sessionId, now, code.origin, input.userAgent);
    return { accessToken: access.token, expiresAt: access.expiresAt, userId: code.userId };
  }

  /**
   * Issues a new access token from a refresh token. The refresh token is kept, unless the chatbot's session policy
   * rotates them: then the answer also carries its successor, and the one presented is retired. A retired token
   * presented again within the grace answers the same successor (a lost response can be retried); after it, or
   * once the successor has itself been rotated, it ends the session (its refresh token and live access tokens).
   */
  async refresh(input: {
    userId: string;
    chatbotId: string;
    refreshToken: string;
    clientApiKey?: string | undefined;
    userAgent?: string | undefined;
  }): Promise<RefreshedTokens> {
    const userId = requireId("user_id", input.userId);
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    requireText("refresh_token", input.refreshToken);
    const hash = hashSecret(input.refreshToken);
    const now = this.d.clock.now();
    let rec = await this.d.refreshTokens.byHash(hash);
    let successor: { token: string; expiresAt: number } | undefined;
    if (!rec) {
      const retired = await this.d.refreshTokens.rotated(hash);
      const session = retired && (await this.d.refreshTokens.bySession(retired.sessionId));
      if (!retired || !session || session.userId !== userId || session.chatbotId !== chatbotId)
        throw new UnknownCredentialError(BAD_REFRESH);
      const token = deriveSuccessor(input.refreshToken, retired.successorSalt);
      const policy = await this.d.refreshTokens.policy(chatbotId);
      const grace = policy?.reuseGraceMs ?? 0;
      const current = sameHash(session.tokenHash, hashSecret(token));
      if (session.revokedAt !== null) throw unauthenticated(BAD_REFRESH);
      if (!current || now - retired.rotatedAt > grace) {
        // Reuse of a retired refresh token: it may have been stolen. The whole session ends.
        await this.d.refreshTokens.revokeSession(session.accountId, session.sessionId, now);
        throw unauthenticated(BAD_REFRESH);
      }
      rec = session;
      successor = { token, expiresAt: session.expiresAt };
    } else if (!sameHash(rec.tokenHash, hash) || rec.userId !== userId || rec.chatbotId !== chatbotId)
      throw new UnknownCredentialError(BAD_REFRESH);
    // A revoked token is one we issued: refused the same way, but not counted as a guess.
    if (rec.revokedAt !== null) throw unauthenticated(BAD_REFRESH);
    if (rec.expiresAt <= now) throw unauthenticated("refresh_token has expired", "TokenExpiredError");
    const chatbot = await this.d.chatbots.byId(chatbotId);
    const account = await this.d.accounts.byId(rec.accountId);
    if (!chatbot?.active || chatbot.accountId !== rec.accountId || !account?.active) throw unauthenticated(BAD_REFRESH);
    if (input.clientApiKey) {
      const keyAccount = await this.accountForKey(input.clientApiKey);
      if (!keyAccount || keyAccount.accountId !== rec.accountId) throw new UnknownCredentialError(BAD_REFRESH);
      await keyAccount.markUsed();
    }
    await this.d.admit?.(rec.accountId);
    if (!successor && (await this.d.refreshTokens.policy(chatbotId))?.rotate)
      successor = await this.rotate(rec, input.refreshToken, now);
    const access = await this.d.jwt.signAccess(
      { accountId: rec.accountId, chatbotId, userId, sessionId: rec.sessionId },
      this.d.ttl.access,
    );
    await this.touch(rec.sessionId, now, null, input.userAgent, rec);
    return {
      accessToken: access.token,
      expiresAt: access.expiresAt,
      ...(successor ? { refreshToken: successor } : {}),
    };
  }

  /** Retires `token` for a successor derived from it; a concurrent refresh that rotated it first wins. */
  private async rotate(
    rec: RefreshTokenRecord,
    token: string,
    now: number,
  ): Promise<{ token: string; expiresAt: number }> {
    const salt = newRotationSalt();
    const next = deriveSuccessor(token, salt);
    if (await this.d.refreshTokens.rotate(rec.sessionId, rec.tokenHash, hashSecret(next), salt, now))
      return { token: next, expiresAt: rec.expiresAt };
    // Rotated at the same moment by another request with the same token: answer what that one answered.
    const retired = await this.d.refreshTokens.rotated(rec.tokenHash);
    if (!retired) throw unauthenticated(BAD_REFRESH);
    return { token: deriveSuccessor(token, retired.successorSalt), expiresAt: rec.expiresAt };
  }

  /**
   * Records a use of a session; advisory, so a busy database does not fail the request it describes. Like an API
   * key's, the last use is kept to the minute: a refresh that would change nothing else writes nothing within it.
   */
  private async touch(
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
      await this.d.refreshTokens.touch(sessionId, at, origin, agent);
    } catch {
      // The last-use mark is advisory.
    }
  }

  /**
   * Issues an ID token for the account API: from an API key (servers, with the account's e-mail), or from a
   * person's e-mail and password (the account's owner, or a member who has accepted their invitation).
   */
  async getIdToken(input: {
    email: string;
    clientApiKey?: string | undefined;
    password?: string | undefined;
    /** Where the sign-in came from, for the audit log. */
    origin?: CallOrigin | undefined;
  }): Promise<{ idToken: string; expiresAt: number }> {
    const email = requireId("user_email_id", input.email);
    if (!input.clientApiKey && !input.password) throw invalidArgument("client_api_key", "is required (or password)");
    if (input.password && input.password.length > MAX_PASSWORD)
      throw invalidArgument("password", `must be at most ${MAX_PASSWORD} characters`);
    let account = await this.d.accounts.byEmail(email);
    let person = account?.email;
    let ok = false;
    let markUsed: (() => Promise<void>) | undefined;
    let apiKeyId: string | undefined;
    if (input.clientApiKey) {
      const keyAccount = await this.accountForKey(input.clientApiKey);
      ok = !!account && keyAccount?.accountId === account.accountId;
      markUsed = keyAccount?.markUsed;
      apiKeyId = keyAccount?.apiKeyId;
    } else if (input.password) {
      const member = account ? undefined : await this.d.members.byEmail(email);
      if (member?.joinedAt != null) {
        account = await this.d.accounts.byId(member.accountId);
        person = member.email;
      }
      // Hash even for an unknown e-mail, so timing does not tell which e-mails exist.
      const stored = (member ? member.passwordHash : account?.passwordHash) ?? UNUSABLE_HASH;
      ok = (await verifyPassword(input.password, stored)) && stored !== UNUSABLE_HASH && !!account;
    }
    const method = input.clientApiKey ? "api_key" : "password";
    if (!ok || !account || !person) {
      // Recorded in the account the e-mail is a person of, when it is one (an unknown e-mail has no account to tell).
      const of = account?.accountId ?? (await this.d.members.byEmail(email))?.accountId;
      const who = { kind: "service" as const, accountId: of ?? "", actor: email, origin: input.origin };
      if (of) await this.d.audit?.note(who, "sign_in.failed", "", { method });
      throw new UnknownCredentialError(BAD_ID_CREDENTIAL);
    }
    if (!account.active) throw unauthenticated(BAD_ID_CREDENTIAL);
    await this.d.admit?.(account.accountId);
    await markUsed?.();
    const who = { kind: "service" as const, accountId: account.accountId, actor: person, origin: input.origin };
    await this.d.audit?.note(who, "sign_in.succeeded", "", { method });
    // Its own session; minted with the API key, or else with the password. Revoking either revokes it.
    const parent = apiKeyId ? { apiKeyId } : { viaPassword: true };
    const t = await this.d.jwt.signId(
      { accountId: account.accountId, email: person, sessionId: newId(), ...parent },
      this.d.ttl.id,
    );
    return { idToken: t.token, expiresAt: t.expiresAt };
  }

  /**
   * Revokes, at once, every token that descends from the credentials named (see lineage.ts): those issued before
   * now are refused at their next call, and the open streams they opened end (the stream guard re-checks).
   */
  async revokeLineage(ids: readonly string[], keep?: IdClaims): Promise<void> {
    // One millisecond on: a token issued in the very millisecond of the revocation is refused too.
    const at = this.d.clock.now() + 1;
    await this.d.refreshTokens.revokeLineage(ids, at);
    // The session that changed the password proved the current one: it is carried over, the others end.
    if (keep?.sessionId) await this.d.refreshTokens.revokeLineage([lineage.carried(keep.sessionId)], at);
  }

  /** Signs out of one ID token's session (the console's sign-out): that token is refused from then on. */
  async signOut(token: string): Promise<void> {
    let claims: IdClaims;
    try {
      claims = await this.d.jwt.verifyId(token);
    } catch {
      return; // An expired or foreign token needs no revoking.
    }
    if (claims.sessionId) await this.revokeLineage([lineage.session(claims.sessionId)]);
  }

  /** Checks the frame's access token: signature, type, expiry, revocation, and that the chatbot is still active. */
  async authenticateFrame(token: string): Promise<AccessClaims> {
    const claims = await this.d.jwt.verifyAccess(token);
    const { notBefore, chatbot } = await this.d.refreshTokens.frameAccess(
      claims.chatbotId,
      claims.userId,
      claims.sessionId,
    );
    if (notBefore !== undefined && claims.issuedAt < notBefore)
      throw unauthenticated("the access token has been revoked", "TokenRevokedError");
    if (!chatbot?.active || chatbot.accountId !== claims.accountId)
      throw unauthenticated("the access token is invalid");
    return claims;
  }

  /**
   * Checks an ID token, that its account is still active and that the person it names still belongs to it; the
   * caller carries the role they have now (a role change or a removal takes effect on the next call).
   */
  async authenticateAccount(token: string): Promise<IdClaims & { caller: AccountCaller }> {
    const claims = await this.d.jwt.verifyId(token);
    // Read side by side (one round trip's wait, not three): the account, its lineage's revocations, the key.
    const [account, notBefore, keys] = await Promise.all([
      this.d.accounts.byId(claims.accountId),
      // Valid only while every credential it descends from is: the person, the password, its session, the key.
      this.d.refreshTokens.lineageNotBefore(lineageOf(claims)),
      claims.apiKeyId ? this.d.apiKeys.listForAccount(claims.accountId) : undefined,
    ]);
    const caller = account?.active ? await resolvePerson(this.d.members, account, claims.email) : undefined;
    if (!caller) throw unauthenticated("the ID token is invalid");
    if (notBefore !== undefined && claims.issuedAt < notBefore && !(await this.carried(claims)))
      throw unauthenticated("the ID token has been revoked: sign in again", "TokenRevokedError");
    if (claims.apiKeyId) {
      const key = keys?.find((k) => k.apiKeyId === claims.apiKeyId);
      if (!key || !apiKeyUsable(key, this.d.clock.now()))
        throw unauthenticated(
          "the ID token has been revoked: the API key it was minted with no longer works",
          "TokenRevokedError",
        );
    }
    return { ...claims, caller };
  }

  /**
   * Whether a token revoked only by a password change is the session that made the latest one (the rare path, read
   * only once a lineage is found revoked): neither its person nor its session is revoked, and it was carried over
   * at or after the password's latest revocation.
   */
  private async carried(c: IdClaims): Promise<boolean> {
    if (!c.sessionId || !c.viaPassword) return false;
    const tokens = this.d.refreshTokens;
    const strict = await tokens.lineageNotBefore([lineage.person(c.accountId, c.email), lineage.session(c.sessionId)]);
    if (strict !== undefined && c.issuedAt < strict) return false;
    const password = await tokens.lineageNotBefore([lineage.password(c.accountId, c.email)]);
    const carried = await tokens.lineageNotBefore([lineage.carried(c.sessionId)]);
    return password === undefined || (carried !== undefined && carried >= password);
  }

  /** Revokes refresh tokens in scope, and the live access tokens of the same users. */
  async revoke(scope: RevocationScope, who?: AuditActor): Promise<number> {
    const log = this.d.log;
    if (!log) return this.d.refreshTokens.revoke(scope, this.d.clock.now());
    return this.d.transaction(async (tx) => {
      const n = await tx.refreshTokens.revoke(scope, this.d.clock.now());
      // The customer's user_id stays out of the audit log (it would outlive their erasure): only that one was named.
      const details = { chatbot_id: scope.chatbotId ?? "", by_user_id: scope.userId ? "yes" : "no", revoked: n };
      if (who) await this.d.audit?.record(tx, who, "session.revoked", scope.chatbotId ?? "", details);
      await log.record(tx, scope.accountId, [
        {
          type: "session.revoked",
          data: { chatbotId: scope.chatbotId ?? "", userId: scope.userId ?? "", revoked: n },
        },
      ]);
      return n;
    });
  }

  /** The chatbot an access token is for (the frame needs its settings). */
  chatbot(chatbotId: string): Promise<ChatbotRecord | undefined> {
    return this.d.chatbots.byId(chatbotId);
  }

  /**
   * The account of a usable API key, and a function that records its use: called only once the whole request is
   * accepted, so a refused request (the key of another chatbot's account, say) writes nothing.
   */
  private async accountForKey(
    key: string,
  ): Promise<(AccountRecord & { apiKeyId: string; markUsed(): Promise<void> }) | undefined> {
    if (key.length > 512) return undefined;
    const hash = hashSecret(key);
    const rec = await this.d.apiKeys.byHash(hash);
    const now = this.d.clock.now();
    if (!rec || !sameHash(rec.keyHash, hash) || !apiKeyUsable(rec, now)) return undefined;
    const account = await this.d.accounts.byId(rec.accountId);
    if (!account?.active) return undefined;
    const markUsed = async () => {
      if (rec.lastUsedAt !== null && now - rec.lastUsedAt < LAST_USED_RESOLUTION_MS) return;
      try {
        await this.d.apiKeys.touch(rec.apiKeyId, now, now - LAST_USED_RESOLUTION_MS);
      } catch {
        // The last-use mark is advisory: a busy database must not fail the request it describes.
      }
    };
    return { ...account, apiKeyId: rec.apiKeyId, markUsed };
  }
}

/** The origin a launch code is bound to: the one asked for, which must be allowed, or the chatbot's only one. */
function embedOrigin(allowed: readonly string[], asked: string): string {
  if (asked === "") {
    if (allowed.length === 1) return allowed[0]!;
    throw invalidArgument("embed_origin", "is required with launch_code: the chatbot has several allowed origins");
  }
  const origin = originOf(asked);
  if (!origin || !allowed.includes(origin))
    throw invalidArgument("embed_origin", "must be one of the chatbot's allowed origins");
  return origin;
}

/** scheme://host[:port] of an absolute http(s) address; undefined for anything else. */
function originOf(s: string): string | undefined {
  try {
    const u = new URL(s);
    return u.protocol === "https:" || u.protocol === "http:" ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A User-Agent as kept with a session: printable, bounded; null when none was sent. */
function userAgentOf(ua: string | undefined): string | null {
  if (!ua) return null;
  return ua.replace(/[^\x20-\x7e]/g, "").slice(0, MAX_USER_AGENT);
}
