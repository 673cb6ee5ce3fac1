import type { RefreshTokenRepository } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  token_hash: string;
  account_id: string;
  chatbot_id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** Refresh tokens (hashes only) and access-token revocations in SQLite. */
export function sqliteRefreshTokens(db: Db): Sync<RefreshTokenRepository> {
  const insert = db.prepare(
    "INSERT INTO refresh_tokens (token_hash, account_id, chatbot_id, user_id, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const byHash = db.prepare<[string], Row>("SELECT * FROM refresh_tokens WHERE token_hash = ?");
  const notBefore = db.prepare<[string, string], { not_before: number }>(
    "SELECT not_before FROM token_revocations WHERE chatbot_id = ? AND user_id = ?",
  );
  const raise = db.prepare(
    "INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES (?, ?, ?) ON CONFLICT (chatbot_id, user_id) DO UPDATE SET not_before = max(not_before, excluded.not_before)",
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
  return {
    insert: (r) =>
      void insert.run(r.tokenHash, r.accountId, r.chatbotId, r.userId, r.createdAt, r.expiresAt, r.revokedAt),
    byHash: (h) => {
      const r = byHash.get(h);
      return (
        r && {
          tokenHash: r.token_hash,
          accountId: r.account_id,
          chatbotId: r.chatbot_id,
          userId: r.user_id,
          createdAt: r.created_at,
          expiresAt: r.expires_at,
          revokedAt: r.revoked_at,
        }
      );
    },
    revoke: (s, at) => revoke.immediate(s.accountId, s.chatbotId ?? null, s.userId ?? null, at),
    notBefore: (chatbotId, userId) => notBefore.get(chatbotId, userId)?.not_before,
  };
}
