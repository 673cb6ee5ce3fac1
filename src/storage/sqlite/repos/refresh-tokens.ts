import type { AccountRepository, ApiKeyRepository } from "../../../domain/account/repository.js";
import type { IdTokenAccess, RefreshTokenRepository, SessionPolicyRecord } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import {
  fromTokenWithAccountValues,
  type RefreshTokenRow,
  type RotationRow,
  refreshTokenValues,
  TOKEN_WITH_ACCOUNT_COLUMNS,
  type TokenWithAccountValues,
  toRefreshToken,
  toRotation,
} from "../../token-rows.js";
import type { Db } from "../database.js";
import { ShortMemo } from "./short-memo.js";
import { fileState, UnchangedMemo } from "./unchanged-memo.js";

/** How long a chatbot's session policy is kept in memory, ms. */
const POLICY_CACHE_MS = 1000;

/** The JSON of a frozen list of lineage ids, made once per list (a kept token's, handed again on each call). */
const lineageKeys = new WeakMap<readonly string[], string>();

/** The lineage memo's key (and the statement's parameter) of `ids`: their JSON. */
function lineageKey(ids: readonly string[]): string {
  // Only a frozen list can be keyed by itself: a list that may change later would keep a stale key.
  if (!Object.isFrozen(ids)) return JSON.stringify(ids);
  let key = lineageKeys.get(ids);
  if (key === undefined) {
    key = JSON.stringify(ids);
    lineageKeys.set(ids, key);
  }
  return key;
}

/** The reads of other repositories an ID token's check makes with the lineage's (idTokenAccess). */
export interface IdTokenReads {
  accounts: Pick<Sync<AccountRepository>, "byId">;
  apiKeys: Pick<Sync<ApiKeyRepository>, "listForAccount">;
}

/** Refresh tokens (hashes only), the sessions they are, their rotation, and access-token revocations in SQLite. */
export function sqliteRefreshTokens(db: Db, reads: IdTokenReads): Sync<RefreshTokenRepository> {
  const insert = db.prepare(
    `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at,
       revoked_at, last_used_at, last_origin, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byHash = db.prepare<[string], RefreshTokenRow>("SELECT * FROM refresh_tokens WHERE token_hash = ?");
  // Read on every refresh: as an array (see fromTokenWithAccountValues).
  const withAccount = db.prepare<[string], TokenWithAccountValues>(`${TOKEN_WITH_ACCOUNT_COLUMNS}?`).raw(true);
  const bySession = db.prepare<[string], RefreshTokenRow>("SELECT * FROM refresh_tokens WHERE session_id = ?");
  const notBefore = db.prepare<[string, string, string | null], { not_before: number | null }>(
    // SQLite's max() of several values is NULL when one is: each side stands in for the other when it is missing.
    `SELECT max(coalesce(nb, rv), coalesce(rv, nb)) AS not_before FROM (SELECT
       (SELECT not_before FROM token_revocations WHERE chatbot_id = ? AND user_id = ?) AS nb,
       (SELECT revoked_at FROM refresh_tokens WHERE session_id = ?) AS rv)`,
  );
  const frameAccess = db
    .prepare<[string, string, string | null], [string | null, number | null, number | null]>(
      // The same revocation instants as notBefore, and the chatbot, in one statement (one snapshot).
      // …and the session's own lineage mark, which outlives its refresh token when the customer is erased.
      // Every frame read runs it: each parameter bound once, by position (p), and the row read as an array, about 5,800
      // instructions a call fewer than named parameters and a row object (better-sqlite3 reads an object's property
      // per parameter and makes and hashes a column name string per column). The LIMIT keeps the subquery from being
      // flattened into the outer one, where each use of nb, rv and sv would run its lookup again.
      `SELECT b.account_id, b.active, max(coalesce(nb, rv, sv), coalesce(rv, sv, nb), coalesce(sv, nb, rv))
       FROM (SELECT
         (SELECT not_before FROM token_revocations WHERE chatbot_id = p.c AND user_id = p.u) AS nb,
         (SELECT revoked_at FROM refresh_tokens WHERE session_id = p.s) AS rv,
         (SELECT not_before FROM token_revocations WHERE chatbot_id = '' AND user_id = 'session:' || p.s) AS sv,
         p.c AS c
         FROM (SELECT ? AS c, ? AS u, ? AS s) AS p LIMIT 1)
       LEFT JOIN chatbots b ON b.chatbot_id = c`,
    )
    .raw(true);
  const notBeforePair = db.prepare<[string, string], { not_before: number }>(
    "SELECT not_before FROM token_revocations WHERE chatbot_id = ? AND user_id = ?",
  );
  const raise = db.prepare(
    "INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES (?, ?, ?) ON CONFLICT (chatbot_id, " +
      "user_id) DO UPDATE SET not_before = max(not_before, excluded.not_before)",
  );
  const list = db.prepare<unknown[], RefreshTokenRow>(
    `SELECT * FROM refresh_tokens WHERE account_id = ? AND (? IS NULL OR chatbot_id = ?) AND (? IS NULL OR user_id = ?)
     ORDER BY created_at DESC, session_id DESC LIMIT ? OFFSET ?`,
  );
  const revokeSession = db.prepare(
    "UPDATE refresh_tokens SET revoked_at = ? WHERE account_id = ? AND session_id = ? AND revoked_at IS NULL",
  );
  const touch = db.prepare(
    `UPDATE refresh_tokens SET last_used_at = max(last_used_at, ?), last_origin = coalesce(?, last_origin),
       user_agent = coalesce(?, user_agent) WHERE session_id = ?`,
  );
  const swap = db.prepare("UPDATE refresh_tokens SET token_hash = ? WHERE session_id = ? AND token_hash = ?");
  const retire = db.prepare(
    "INSERT INTO refresh_token_rotations (token_hash, session_id, rotated_at, successor_salt) VALUES (?, ?, ?, ?)",
  );
  const rotated = db.prepare<[string], RotationRow>("SELECT * FROM refresh_token_rotations WHERE token_hash = ?");
  const policy = db.prepare<[string], { chatbot_id: string; rotate: number; reuse_grace_ms: number }>(
    "SELECT * FROM session_policies WHERE chatbot_id = ?",
  );
  // Every refresh reads its chatbot's policy: kept a second, like the chatbot itself (sqliteChatbots), and dropped
  // at once when this process sets it (one process serves a SQLite file).
  const policies = new ShortMemo<SessionPolicyRecord | undefined>(POLICY_CACHE_MS);
  const setPolicy = db.prepare(
    "INSERT INTO session_policies (chatbot_id, rotate, reuse_grace_ms) VALUES (?, ?, ?) ON CONFLICT (chatbot_id) DO " +
      "UPDATE SET rotate = excluded.rotate, reuse_grace_ms = excluded.reuse_grace_ms",
  );
  const revoke = db.transaction((accountId: string, chatbotId: string | null, userId: string | null, at: number) => {
    const where = "account_id = ? AND (? IS NULL OR chatbot_id = ?) AND (? IS NULL OR user_id = ?)";
    const args = [accountId, chatbotId, chatbotId, userId, userId];
    const pairs = db
      .prepare<unknown[], { chatbot_id: string; user_id: string }>(
        `SELECT DISTINCT chatbot_id, user_id FROM refresh_tokens WHERE ${where}`,
      )
      .all(...args);
    for (const p of pairs) raise.run(p.chatbot_id, p.user_id, at);
    // A named (chatbot, user) is stopped even if it never had a refresh token stored here.
    if (chatbotId && userId) raise.run(chatbotId, userId, at);
    return db.prepare(`UPDATE refresh_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND ${where}`).run(at, ...args)
      .changes;
  });
  // Credential lineages share the revocations table under the chatbot id "" (no chatbot has it): no new table.
  const lineageNotBefore = db.prepare<[string], { not_before: number | null }>(
    "SELECT max(not_before) AS not_before FROM token_revocations WHERE chatbot_id = '' AND user_id IN (SELECT value " +
      "FROM json_each(?))",
  );
  const revokeLineage = db.transaction((ids: readonly string[], at: number) => {
    for (const id of ids) raise.run("", id, at);
  });
  // Read by every call with a token (revoked since it was issued?): kept while the file is unchanged.
  const lineages = new UnchangedMemo<number | undefined>(fileState(db));
  const notBeforeOf = (ids: readonly string[]): number | undefined => {
    const key = lineageKey(ids);
    return lineages.get(key, () => lineageNotBefore.get(key)?.not_before ?? undefined);
  };
  // An ID token's three reads, kept together (by the lineage, which names the account), with and without the keys:
  // one look at the file's state where three reads made one each.
  const accesses = [false, true].map(() => new UnchangedMemo<IdTokenAccess & { accountId: string }>(fileState(db)));
  const idTokenAccess = (accountId: string, ids: readonly string[], withKeys: boolean) => ({
    accountId,
    account: reads.accounts.byId(accountId),
    notBefore: notBeforeOf(ids),
    keys: withKeys ? reads.apiKeys.listForAccount(accountId) : undefined,
  });
  const rotate = db.transaction((sessionId: string, fromHash: string, toHash: string, salt: string, at: number) => {
    if (swap.run(toHash, sessionId, fromHash).changes !== 1) return false;
    retire.run(fromHash, sessionId, at, salt);
    return true;
  });
  return {
    insert: (r) => void insert.run(...refreshTokenValues(r)),
    byHash: (h) => {
      const r = byHash.get(h);
      return r && toRefreshToken(r);
    },
    byHashWithAccount: (h) => {
      const r = withAccount.get(h);
      return r && fromTokenWithAccountValues(r);
    },
    revokeLineage: (ids, at) => revokeLineage.immediate(ids, at),
    lineageNotBefore: notBeforeOf,
    idTokenAccess: (accountId, ids, withKeys) => {
      const kept = accesses[withKeys ? 1 : 0]!.get(lineageKey(ids), () => idTokenAccess(accountId, ids, withKeys));
      return kept.accountId === accountId ? kept : idTokenAccess(accountId, ids, withKeys);
    },
    revoke: (s, at) => revoke.immediate(s.accountId, s.chatbotId ?? null, s.userId ?? null, at),
    notBefore: (chatbotId, userId, sessionId) =>
      (sessionId === undefined
        ? notBeforePair.get(chatbotId, userId)?.not_before
        : notBefore.get(chatbotId, userId, sessionId)?.not_before) ?? undefined,
    frameAccess: (chatbotId, userId, sessionId) => {
      const r = frameAccess.get(chatbotId, userId, sessionId ?? null);
      return {
        notBefore: r?.[2] ?? undefined,
        chatbot: r && r[0] !== null ? { accountId: r[0], active: r[1] === 1 } : undefined,
      };
    },
    bySession: (id) => {
      const r = bySession.get(id);
      return r && toRefreshToken(r);
    },
    list: (s, limit, offset) => {
      const c = s.chatbotId ?? null;
      const u = s.userId ?? null;
      return list.all(s.accountId, c, c, u, u, limit, offset).map(toRefreshToken);
    },
    revokeSession: (accountId, sessionId, at) => revokeSession.run(at, accountId, sessionId).changes === 1,
    touch: (sessionId, at, origin, userAgent) => void touch.run(at, origin, userAgent, sessionId),
    rotate: (sessionId, fromHash, toHash, salt, at) => rotate.immediate(sessionId, fromHash, toHash, salt, at),
    rotated: (h) => {
      const r = rotated.get(h);
      return r && toRotation(r);
    },
    policy: (chatbotId): SessionPolicyRecord | undefined =>
      policies.get(chatbotId, () => {
        const r = policy.get(chatbotId);
        return r && { chatbotId: r.chatbot_id, rotate: r.rotate === 1, reuseGraceMs: r.reuse_grace_ms };
      }),
    setPolicy: (p) => {
      setPolicy.run(p.chatbotId, p.rotate ? 1 : 0, p.reuseGraceMs);
      policies.forget(p.chatbotId);
    },
  };
}
