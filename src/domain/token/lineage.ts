import { createHash } from "node:crypto";
import type { IdClaims } from "./jwt-strategy.js";

/**
 * The credentials an ID token descends from, as revocation ids: the person (removed from the account), the
 * person's password (changed: named by a fingerprint of its salted hash, so the new password's tokens are another
 * lineage), and the token's own session (signed out of). An API key, the fourth parent, is checked on its own
 * record, which already says whether it is revoked or past its grace.
 */
export const lineage = {
  person: (accountId: string, email: string) => `person:${accountId}:${email.toLowerCase()}`,
  password: (accountId: string, email: string, fingerprint: string) =>
    `password:${accountId}:${email.toLowerCase()}:${fingerprint}`,
  session: (sessionId: string) => `session:${sessionId}`,
};

/** A short fingerprint of a stored (salted, scrypt) password hash: tells one password of a person from the next. */
export function passwordFingerprint(passwordHash: string): string {
  return createHash("sha256").update(passwordHash).digest("base64url").slice(0, 16);
}

/** Every revocation id that would revoke this token. */
export function lineageOf(c: IdClaims): string[] {
  const ids = [lineage.person(c.accountId, c.email)];
  if (c.passwordFingerprint) ids.push(lineage.password(c.accountId, c.email, c.passwordFingerprint));
  if (c.sessionId) ids.push(lineage.session(c.sessionId));
  return ids;
}
