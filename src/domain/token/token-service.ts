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
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import type { ContactProfile, ContactRepository } from "../conversation/repository.js";
import { DomainError, invalidArgument, notFound, unauthenticated } from "../errors.js";
import { hashSecret, newSecret, requireUuid, sameHash } from "../ids.js";
import type { Transact } from "../store.js";
import { optionalEmail, optionalText, requireId, requireText } from "../validate.js";
import type { EventLog } from "../webhook/event-log.js";
import type { AccessClaims, IdClaims, JwtStrategy } from "./jwt-strategy.js";
import type { RefreshTokenRepository, RevocationScope } from "./repository.js";

/** Prefix of every refresh token, so a leaked one is recognisable. */
export const REFRESH_TOKEN_PREFIX = "rt_";

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
}

// One message for every way a key/chatbot pair can be wrong, so none of them can be told apart.
const BAD_KEY = "client_api_key is not valid for this chatbot_id";
const BAD_REFRESH = "refresh_token is not valid for this user_id and chatbot_id";
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
    await this.d.admit?.(account.accountId);
    await account.markUsed();

    const now = this.d.clock.now();
    const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
    const refreshTokenExpiresAt = now + this.d.ttl.refresh * 1000;
    // Signed before anything is stored: a failure here leaves no row behind.
    const access = await this.d.jwt.signAccess({ accountId: account.accountId, chatbotId, userId }, this.d.ttl.access);
    await this.d.transaction(async (tx) => {
      await tx.refreshTokens.insert({
        tokenHash: hashSecret(refreshToken),
        accountId: account.accountId,
        chatbotId,
        userId,
        createdAt: now,
        expiresAt: refreshTokenExpiresAt,
        revokedAt: null,
      });
      await tx.contacts.upsert(account.accountId, userId, profile, now);
    });
    return { accessToken: access.token, refreshToken, accessTokenExpiresAt: access.expiresAt, refreshTokenExpiresAt };
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

  /** Issues a new access token from a refresh token; the refresh token itself is kept, not rotated. */
  async refresh(input: {
    userId: string;
    chatbotId: string;
    refreshToken: string;
    clientApiKey?: string | undefined;
  }): Promise<{ accessToken: string; expiresAt: number }> {
    const userId = requireId("user_id", input.userId);
    const chatbotId = requireUuid("chatbot_id", input.chatbotId);
    requireText("refresh_token", input.refreshToken);
    const hash = hashSecret(input.refreshToken);
    const rec = await this.d.refreshTokens.byHash(hash);
    const now = this.d.clock.now();
    if (!rec || !sameHash(rec.tokenHash, hash) || rec.userId !== userId || rec.chatbotId !== chatbotId)
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
    const access = await this.d.jwt.signAccess({ accountId: rec.accountId, chatbotId, userId }, this.d.ttl.access);
    return { accessToken: access.token, expiresAt: access.expiresAt };
  }

  /**
   * Issues an ID token for the account API: from an API key (servers, with the account's e-mail), or from a
   * person's e-mail and password (the account's owner, or a member who has accepted their invitation).
   */
  async getIdToken(input: {
    email: string;
    clientApiKey?: string | undefined;
    password?: string | undefined;
  }): Promise<{ idToken: string; expiresAt: number }> {
    const email = requireId("user_email_id", input.email);
    if (!input.clientApiKey && !input.password) throw invalidArgument("client_api_key", "is required (or password)");
    if (input.password && input.password.length > MAX_PASSWORD)
      throw invalidArgument("password", `must be at most ${MAX_PASSWORD} characters`);
    let account = await this.d.accounts.byEmail(email);
    let person = account?.email;
    let ok = false;
    let markUsed: (() => Promise<void>) | undefined;
    if (input.clientApiKey) {
      const keyAccount = await this.accountForKey(input.clientApiKey);
      ok = !!account && keyAccount?.accountId === account.accountId;
      markUsed = keyAccount?.markUsed;
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
    if (!ok || !account || !person) throw new UnknownCredentialError(BAD_ID_CREDENTIAL);
    if (!account.active) throw unauthenticated(BAD_ID_CREDENTIAL);
    await this.d.admit?.(account.accountId);
    await markUsed?.();
    const t = await this.d.jwt.signId({ accountId: account.accountId, email: person }, this.d.ttl.id);
    return { idToken: t.token, expiresAt: t.expiresAt };
  }

  /** Checks the frame's access token: signature, type, expiry, revocation, and that the chatbot is still active. */
  async authenticateFrame(token: string): Promise<AccessClaims> {
    const claims = await this.d.jwt.verifyAccess(token);
    const notBefore = await this.d.refreshTokens.notBefore(claims.chatbotId, claims.userId);
    if (notBefore !== undefined && claims.issuedAt < notBefore)
      throw unauthenticated("the access token has been revoked");
    const chatbot = await this.d.chatbots.byId(claims.chatbotId);
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
    const account = await this.d.accounts.byId(claims.accountId);
    const caller = account?.active ? await resolvePerson(this.d.members, account, claims.email) : undefined;
    if (!caller) throw unauthenticated("the ID token is invalid");
    return { ...claims, caller };
  }

  /** Revokes refresh tokens in scope, and the live access tokens of the same users. */
  async revoke(scope: RevocationScope): Promise<number> {
    const log = this.d.log;
    if (!log) return this.d.refreshTokens.revoke(scope, this.d.clock.now());
    const revoked = await this.d.transaction(async (tx) => {
      const n = await tx.refreshTokens.revoke(scope, this.d.clock.now());
      await log.record(tx, scope.accountId, [
        {
          type: "session.revoked",
          data: { chatbotId: scope.chatbotId ?? "", userId: scope.userId ?? "", revoked: n },
        },
      ]);
      return n;
    });
    log.committed();
    return revoked;
  }

  /** The chatbot an access token is for (the frame needs its settings). */
  chatbot(chatbotId: string): Promise<ChatbotRecord | undefined> {
    return this.d.chatbots.byId(chatbotId);
  }

  /**
   * The account of a usable API key, and a function that records its use: called only once the whole request is
   * accepted, so a refused request (the key of another chatbot's account, say) writes nothing.
   */
  private async accountForKey(key: string): Promise<(AccountRecord & { markUsed(): Promise<void> }) | undefined> {
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
    return { ...account, markUsed };
  }
}
