import type { ApiKeyRecord, ApiKeyRepository } from "../../../domain/account/repository.js";
import type { Db } from "../database.js";

interface Row {
  api_key_id: string;
  account_id: string;
  key_hash: string;
  hint: string;
  created_at: number;
  revoked_at: number | null;
}
const toRecord = (r: Row): ApiKeyRecord => ({
  apiKeyId: r.api_key_id,
  accountId: r.account_id,
  keyHash: r.key_hash,
  hint: r.hint,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

/** API keys (hashes only) in SQLite. */
export function sqliteApiKeys(db: Db): ApiKeyRepository {
  const insert = db.prepare(
    "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const byHash = db.prepare<[string], Row>("SELECT * FROM api_keys WHERE key_hash = ?");
  const list = db.prepare<[string], Row>("SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at");
  const revokeOne = db.prepare(
    "UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND api_key_id = ? AND revoked_at IS NULL",
  );
  const revokeAll = db.prepare("UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL");
  return {
    insert: (k) => void insert.run(k.apiKeyId, k.accountId, k.keyHash, k.hint, k.createdAt, k.revokedAt),
    byHash: (h) => {
      const r = byHash.get(h);
      return r && toRecord(r);
    },
    listForAccount: (id) => list.all(id).map(toRecord),
    revoke: (accountId, apiKeyId, at) =>
      (apiKeyId ? revokeOne.run(at, accountId, apiKeyId) : revokeAll.run(at, accountId)).changes,
  };
}
