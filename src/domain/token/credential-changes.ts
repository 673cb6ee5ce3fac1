import { lineage, lineageOf } from "../lineage.js";
import type { IdClaims } from "./jwt-strategy.js";

/** One recorded change of what a credential check reads: its place (commit order) and whose credentials it touches. */
export interface CredentialChange {
  seq: number;
  subject: string;
}

/**
 * The changes of what credential checks read, recorded by the back end in the changing transaction (triggers, so
 * whoever writes: the server, the command line, another instance). Places are given in commit order on SQLite; on
 * PostgreSQL a place may commit after a higher one, so a reader asks again for the places it skipped (`missing`).
 */
export interface CredentialChangeRepository {
  /** The changes after place `after`, and those at the places `missing`, in place order. */
  since(after: number, missing: readonly number[]): Promise<CredentialChange[]>;
  /** The highest place recorded so far (0 when none). */
  last(): Promise<number>;
  /** Deletes changes recorded before `before` (ms since the epoch); answers how many. */
  prune(before: number): Promise<number>;
}

/**
 * The subjects a change names, as the triggers of both back ends write them (SQLite migration 25, PostgreSQL 19):
 * a stream is ended only after a check, so a subject that names more credentials than it must costs a check, never
 * a wrong verdict; one that named fewer would let a revoked stream live until the safety-net sweep.
 */
export const credentialSubject = {
  /** token_revocations of (chatbot, user) and refresh_tokens revoked or deleted: a customer's access tokens. */
  customer: (chatbotId: string, userId: string) => `user:${chatbotId}:${userId}`,
  /** A chatbot disabled, moved or deleted. */
  chatbot: (chatbotId: string) => `chatbot:${chatbotId}`,
  /** An account closed, or any of its members removed, re-roled or renamed. */
  account: (accountId: string) => `account:${accountId}`,
  /** An API key revoked, given an end (rotation's grace) or deleted. */
  apiKey: (apiKeyId: string) => `apikey:${apiKeyId}`,
  /** A credential lineage revoked (lineage.ts: a person, a password, a console session, a carried session). */
  lineage: (id: string) => `lin:${id}`,
};

/** The subjects whose changes may make a frame's access token fail its check. */
export function frameSubjects(c: { accountId: string; chatbotId: string; userId: string }): string[] {
  return [
    credentialSubject.customer(c.chatbotId, c.userId),
    credentialSubject.chatbot(c.chatbotId),
    credentialSubject.account(c.accountId),
  ];
}

/** The subjects whose changes may make an ID token fail its check. */
export function idTokenSubjects(c: IdClaims): string[] {
  const out = [credentialSubject.account(c.accountId), ...lineageOf(c).map(credentialSubject.lineage)];
  if (c.sessionId) out.push(credentialSubject.lineage(lineage.carried(c.sessionId)));
  if (c.apiKeyId) out.push(credentialSubject.apiKey(c.apiKeyId));
  return out;
}
