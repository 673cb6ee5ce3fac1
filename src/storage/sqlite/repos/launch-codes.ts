import type { LaunchCodeRecord, LaunchCodeRepository } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  code_hash: string;
  account_id: string;
  chatbot_id: string;
  user_id: string;
  session_id: string;
  origin: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One-time launch codes of the chat frame in SQLite (hashes only). */
export function sqliteLaunchCodes(db: Db): Sync<LaunchCodeRepository> {
  const insert = db.prepare(
    `INSERT INTO launch_codes (code_hash, account_id, chatbot_id, user_id, session_id, origin, created_at, expires_at,
       used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byHash = db.prepare<[string], Row>("SELECT * FROM launch_codes WHERE code_hash = ?");
  const use = db.prepare("UPDATE launch_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL");
  return {
    insert: (r) =>
      void insert.run(
        r.codeHash,
        r.accountId,
        r.chatbotId,
        r.userId,
        r.sessionId,
        r.origin,
        r.createdAt,
        r.expiresAt,
        r.usedAt,
      ),
    byHash: (h): LaunchCodeRecord | undefined => {
      const r = byHash.get(h);
      return (
        r && {
          codeHash: r.code_hash,
          accountId: r.account_id,
          chatbotId: r.chatbot_id,
          userId: r.user_id,
          sessionId: r.session_id,
          origin: r.origin,
          createdAt: r.created_at,
          expiresAt: r.expires_at,
          usedAt: r.used_at,
        }
      );
    },
    markUsed: (h, at) => use.run(at, h).changes === 1,
  };
}
