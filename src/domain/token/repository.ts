import type { AccountRecord, ApiKeyRecord } from "../account/repository.js";
import type { ContactProfile } from "../conversation/repository.js";

/**
 * A refresh token as stored: its hash and what it is bound to. Each one is a session of (chatbot, user); with
 * rotation its hash changes and the session (its id, its metadata) stays.
 */
export interface RefreshTokenRecord {
  tokenHash: string;
  /** The session's id, a uuid: what the registry lists and access tokens name (`sid`). */
  sessionId: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** The last issuance, refresh or launch. */
  lastUsedAt: number;
  /** The embedding page's origin of the last launch; "" when none is known. */
  lastOrigin: string;
  /** The User-Agent of the last use; "" when none was sent. */
  userAgent: string;
}

/** A refresh token retired by rotation: its successor is derived again from it and the salt when it is reused. */
export interface RotatedTokenRecord {
  tokenHash: string;
  sessionId: string;
  rotatedAt: number;
  successorSalt: string;
}

/** A chatbot's session policy: whether refresh tokens rotate, and the grace of a retired one. */
export interface SessionPolicyRecord {
  chatbotId: string;
  rotate: boolean;
  reuseGraceMs: number;
}

/** Which sessions a list shows: the account's, narrowed to a chatbot and/or a user. */
export interface SessionScope {
  accountId: string;
  chatbotId?: string | undefined;
  userId?: string | undefined;
}

/** Which refresh tokens a revocation reaches. */
export interface RevocationScope {
  accountId: string;
  chatbotId?: string | undefined;
  userId?: string | undefined;
}

/**
 * A session to issue for an API key this instance has seen valid (Store.issueSession): the refresh token to insert,
 * its account being the one the key was seen to belong to (a key never changes account).
 */
export interface SessionIssue {
  /** The API key's hash. */
  keyHash: string;
  /** The refresh token (the session) to insert; its `createdAt` is the instant the key is checked at. */
  token: RefreshTokenRecord;
  /**
   * Also a one-time launch code of the session, bound to `embedOrigin` as asked ("" for the chatbot's only allowed
   * origin): stored only where the chatbot allows that origin (embedOrigin in credentials.ts).
   */
  launch?: { codeHash: string; expiresAt: number; embedOrigin: string } | undefined;
  /** The contact profile to fold into the user's contact (ContactRepository.ensure's). */
  profile?: ContactProfile | undefined;
}

/**
 * What Store.issueSession did: issued (the key's id and last use, for its advisory mark), or refused with nothing
 * written; `revoked` when the key exists but is revoked or past its rotation grace.
 */
export type SessionIssued =
  | { issued: true; apiKeyId: string; keyLastUsedAt: number | null; launchOrigin?: string | undefined }
  | {
      issued: false;
      revoked: boolean;
      /** Set when the key and chatbot passed but the launch code's origin did not: the chatbot's allowed origins. */
      allowedOrigins?: readonly string[] | undefined;
    };

/** Storage of refresh tokens and of the per-user "not before" instants that stop live access tokens. */
export interface RefreshTokenRepository {
  insert(r: RefreshTokenRecord): Promise<void>;
  byHash(tokenHash: string): Promise<RefreshTokenRecord | undefined>;
  /** The token with this hash and whether its account exists and is active, read in one statement. */
  byHashWithAccount(tokenHash: string): Promise<{ token: RefreshTokenRecord; accountActive: boolean } | undefined>;
  /** Revokes the matching refresh tokens and raises "not before" for every (chatbot, user) they were bound to. */
  revoke(scope: RevocationScope, at: number): Promise<number>;
  /**
   * Access tokens of (chatbot, user) issued before this instant are refused; with `sessionId`, also those of that
   * session issued before it was revoked (the later of the two).
   */
  notBefore(chatbotId: string, userId: string, sessionId?: string): Promise<number | undefined>;
  /**
   * What a frame call checks, read together in one statement (one round trip, one snapshot): `notBefore` as above
   * and the chatbot's account and state (undefined when it does not exist).
   */
  frameAccess(
    chatbotId: string,
    userId: string,
    sessionId?: string,
  ): Promise<{ notBefore: number | undefined; chatbot: { accountId: string; active: boolean } | undefined }>;
  /** One session by its id, whatever account it is of (callers check the account). */
  bySession(sessionId: string): Promise<RefreshTokenRecord | undefined>;
  /** A page of sessions in scope, newest first (created_at, then session id). */
  list(scope: SessionScope, limit: number, offset: number): Promise<RefreshTokenRecord[]>;
  /** Revokes one session of the account; false when it is not the account's or was already revoked. */
  revokeSession(accountId: string, sessionId: string, at: number): Promise<boolean>;
  /** Records a use of the session (never moves last use back). */
  touch(sessionId: string, at: number, origin: string | null, userAgent: string | null): Promise<void>;
  /**
   * Replaces the session's token `fromHash` by `toHash` and keeps the retired one; false when the session's token
   * is no longer `fromHash` (another refresh rotated it first).
   */
  rotate(sessionId: string, fromHash: string, toHash: string, salt: string, at: number): Promise<boolean>;
  /** A token retired by rotation. */
  rotated(tokenHash: string): Promise<RotatedTokenRecord | undefined>;
  /** The chatbot's session policy; undefined for the default (no rotation). */
  policy(chatbotId: string): Promise<SessionPolicyRecord | undefined>;
  /** Sets the chatbot's session policy. */
  setPolicy(p: SessionPolicyRecord): Promise<void>;
  /**
   * Revokes credentials by lineage id (a person, a console session, an ID token's own session): every token that
   * names one of `ids` and was issued before `at` is refused from then on. Never moves an instant back.
   */
  revokeLineage(ids: readonly string[], at: number): Promise<void>;
  /** The latest revocation instant of any of `ids`; undefined when none was ever revoked. */
  lineageNotBefore(ids: readonly string[]): Promise<number | undefined>;
  /**
   * What every call with an ID token checks, read together: the account (`AccountRepository.byId`), the latest
   * revocation of the token's lineage (`lineageNotBefore`), and, when `withKeys` (a token minted with an API key),
   * the account's keys (`ApiKeyRepository.listForAccount`). One call where three made a promise each.
   */
  idTokenAccess(accountId: string, lineage: readonly string[], withKeys: boolean): Promise<IdTokenAccess>;
}

/** What an ID token's check reads (RefreshTokenRepository.idTokenAccess); shared between callers: never modified. */
export interface IdTokenAccess {
  readonly account: AccountRecord | undefined;
  readonly notBefore: number | undefined;
  readonly keys: readonly ApiKeyRecord[] | undefined;
}

/** A one-time launch code as stored: its hash, and the session, chatbot, user and origin it is bound to. */
export interface LaunchCodeRecord {
  codeHash: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  sessionId: string;
  /** The only embedding origin it works under. */
  origin: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

/** Storage of launch codes (hashes only). */
export interface LaunchCodeRepository {
  insert(r: LaunchCodeRecord): Promise<void>;
  byHash(codeHash: string): Promise<LaunchCodeRecord | undefined>;
  /** Marks the code used; false when it already was (so exactly one exchange wins). */
  markUsed(codeHash: string, at: number): Promise<boolean>;
}

/** A signing key pair as stored. */
export interface SigningKeyRecord {
  kid: string;
  alg: string;
  /** Encrypted at rest (KeySealer), bound to the kid. */
  privateJwk: string;
  publicJwk: string;
  createdAt: number;
  retiredAt: number | null;
}

/** Storage of signing keys. */
export interface SigningKeyRepository {
  list(): Promise<SigningKeyRecord[]>;
  insert(k: SigningKeyRecord): Promise<void>;
  retireAllBut(kid: string, at: number): Promise<void>;
  /** Replaces a private key's stored form if it is still `was` (another process may have done it first). */
  replacePrivateJwk(kid: string, was: string, now: string): Promise<void>;
}
