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
