import type { LaunchCodeRecord, RefreshTokenRecord, SigningKeyRecord } from "../domain/token/repository.js";
import { type Big, isSet, numOrNull } from "./row-values.js";

// The rows of the token tables, the same on both back ends but for the conversions in row-values.ts.

/** A row of `refresh_tokens` (hashes only): one session. */
export interface RefreshTokenRow {
  token_hash: string;
  session_id: string;
  account_id: string;
  chatbot_id: string;
  user_id: string;
  created_at: Big;
  expires_at: Big;
  revoked_at: Big | null;
  last_used_at: Big;
  last_origin: string;
  user_agent: string;
}

export const toRefreshToken = (r: RefreshTokenRow): RefreshTokenRecord => ({
  tokenHash: r.token_hash,
  sessionId: r.session_id,
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  userId: r.user_id,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  revokedAt: numOrNull(r.revoked_at),
  lastUsedAt: Number(r.last_used_at),
  lastOrigin: r.last_origin,
  userAgent: r.user_agent,
});

/** A refresh token's columns and its account's state (null when the account is gone), in one row. */
export const TOKEN_WITH_ACCOUNT =
  "SELECT t.*, a.active AS account_active FROM refresh_tokens t LEFT JOIN accounts a ON a.account_id = t.account_id " +
  "WHERE t.token_hash = ";

export const toRefreshTokenWithAccount = (r: RefreshTokenRow & { account_active: boolean | number | null }) => ({
  token: toRefreshToken(r),
  accountActive: r.account_active !== null && isSet(r.account_active),
});

/** TOKEN_WITH_ACCOUNT's columns named in order (the insert's, then the account's state), for a row read as an array. */
export const TOKEN_WITH_ACCOUNT_COLUMNS =
  "SELECT t.token_hash, t.session_id, t.account_id, t.chatbot_id, t.user_id, t.created_at, t.expires_at, " +
  "t.revoked_at, t.last_used_at, t.last_origin, t.user_agent, a.active FROM refresh_tokens t LEFT JOIN accounts a " +
  "ON a.account_id = t.account_id WHERE t.token_hash = ";

/** A row of TOKEN_WITH_ACCOUNT_COLUMNS read as an array (better-sqlite3's raw mode). */
export type TokenWithAccountValues = [
  tokenHash: string,
  sessionId: string,
  accountId: string,
  chatbotId: string,
  userId: string,
  createdAt: Big,
  expiresAt: Big,
  revokedAt: Big | null,
  lastUsedAt: Big,
  lastOrigin: string,
  userAgent: string,
  accountActive: number | null,
];

/**
 * toRefreshTokenWithAccount of a row read as an array: a driver that builds each row as an object adds its columns
 * one by one (a property transition each, 12 here), where an array holds them as elements.
 */
export const fromTokenWithAccountValues = (v: TokenWithAccountValues) => ({
  token: {
    tokenHash: v[0],
    sessionId: v[1],
    accountId: v[2],
    chatbotId: v[3],
    userId: v[4],
    createdAt: Number(v[5]),
    expiresAt: Number(v[6]),
    revokedAt: numOrNull(v[7]),
    lastUsedAt: Number(v[8]),
    lastOrigin: v[9],
    userAgent: v[10],
  } satisfies RefreshTokenRecord,
  accountActive: v[11] !== null && isSet(v[11]),
});

/** The values of a refresh token's insert, in column order. */
export const refreshTokenValues = (r: RefreshTokenRecord) =>
  [
    r.tokenHash,
    r.sessionId,
    r.accountId,
    r.chatbotId,
    r.userId,
    r.createdAt,
    r.expiresAt,
    r.revokedAt,
    r.lastUsedAt,
    r.lastOrigin,
    r.userAgent,
  ] as const;

/** A row of `refresh_token_rotations`: a hash rotated away, kept to recognise its reuse. */
export interface RotationRow {
  token_hash: string;
  session_id: string;
  rotated_at: Big;
  successor_salt: string;
}

export const toRotation = (r: RotationRow) => ({
  tokenHash: r.token_hash,
  sessionId: r.session_id,
  rotatedAt: Number(r.rotated_at),
  successorSalt: r.successor_salt,
});

/** A row of `launch_codes` (hashes only). */
export interface LaunchCodeRow {
  code_hash: string;
  account_id: string;
  chatbot_id: string;
  user_id: string;
  session_id: string;
  origin: string;
  created_at: Big;
  expires_at: Big;
  used_at: Big | null;
}

export const toLaunchCode = (r: LaunchCodeRow): LaunchCodeRecord => ({
  codeHash: r.code_hash,
  accountId: r.account_id,
  chatbotId: r.chatbot_id,
  userId: r.user_id,
  sessionId: r.session_id,
  origin: r.origin,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  usedAt: numOrNull(r.used_at),
});

/** The values of a launch code's insert, in column order. */
export const launchCodeValues = (r: LaunchCodeRecord) =>
  [r.codeHash, r.accountId, r.chatbotId, r.userId, r.sessionId, r.origin, r.createdAt, r.expiresAt, r.usedAt] as const;

/** A row of `signing_keys`. */
export interface SigningKeyRow {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: Big;
  retired_at: Big | null;
}

export const toSigningKey = (r: SigningKeyRow): SigningKeyRecord => ({
  kid: r.kid,
  alg: r.alg,
  privateJwk: r.private_jwk,
  publicJwk: r.public_jwk,
  createdAt: Number(r.created_at),
  retiredAt: numOrNull(r.retired_at),
});

/** The values of a signing key's insert, in column order. */
export const signingKeyValues = (k: SigningKeyRecord) =>
  [k.kid, k.alg, k.privateJwk, k.publicJwk, k.createdAt, k.retiredAt] as const;
