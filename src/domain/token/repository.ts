/** A refresh token as stored: its hash and what it is bound to. */
export interface RefreshTokenRecord {
  tokenHash: string;
  accountId: string;
  chatbotId: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

/** Which refresh tokens a revocation reaches. */
export interface RevocationScope {
  accountId: string;
  chatbotId?: string | undefined;
  userId?: string | undefined;
}

/** Storage of refresh tokens and of the per-user "not before" instants that stop live access tokens. */
export interface RefreshTokenRepository {
  insert(r: RefreshTokenRecord): Promise<void>;
  byHash(tokenHash: string): Promise<RefreshTokenRecord | undefined>;
  /** Revokes the matching refresh tokens and raises "not before" for every (chatbot, user) they were bound to. */
  revoke(scope: RevocationScope, at: number): Promise<number>;
  /** Access tokens of (chatbot, user) issued before this instant are refused. */
  notBefore(chatbotId: string, userId: string): Promise<number | undefined>;
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
