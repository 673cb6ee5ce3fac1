/**
 * The credentials an ID token descends from, as revocation ids: the person (removed from the account), the
 * person's password (changed or reset), and the token's own session (signed out of). An API key, the fourth
 * parent, is checked on its own record, which already says whether it is revoked or past its grace. `carried`
 * marks the one session a password change keeps: the one that made it, having proved the current password.
 */
export const lineage = {
  person: (accountId: string, email: string) => `person:${accountId}:${email.toLowerCase()}`,
  password: (accountId: string, email: string) => `password:${accountId}:${email.toLowerCase()}`,
  session: (sessionId: string) => `session:${sessionId}`,
  carried: (sessionId: string) => `carried:${sessionId}`,
};

/** The session a token belongs to (an ID token's `sid`), which a revocation may keep. */
export interface SessionOf {
  sessionId?: string | undefined;
}

/** Every revocation id that would revoke this token. */
export function lineageOf(c: {
  accountId: string;
  email: string;
  viaPassword?: boolean | undefined;
  sessionId?: string | undefined;
}): string[] {
  const ids = [lineage.person(c.accountId, c.email)];
  if (c.viaPassword) ids.push(lineage.password(c.accountId, c.email));
  if (c.sessionId) ids.push(lineage.session(c.sessionId));
  return ids;
}
