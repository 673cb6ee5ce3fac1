import type { ApiKeyRecord, ApiKeyRepository } from "../../../domain/account/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  api_key_id: string;
  account_id: string;
  key_hash: string;
  hint: string;
  name: string;
  created_at: number;
  revoked_at: number | null;
  expires_at: number | null;
  last_used_at: number | null;
}
const toRecord = (r: Row): ApiKeyRecord => ({
  apiKeyId: r.api_key_id,
  accountId: r.account_id,
  keyHash: r.key_hash,
  hint: r.hint,
  name: r.name,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
});

/** API keys (hashes only) in SQLite. */
export function sqliteApiKeys(db: Db): Sync<ApiKeyRepository> {
  const insert = db.prepare(
    "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, name, created_at, revoked_at, expires_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const byHash = db.prepare<[string], Row>("SELECT * FROM api_keys WHERE key_hash = ?");
  const list = db.prepare<[string], Row>("SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, api_key_id");
  const revokeOne = db.prepare(
    "UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND api_key_id = ? AND revoked_at IS NULL",
  );
  const revokeAll = db.prepare("UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL");
  const expire = db.prepare(
    "UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?), ?) WHERE account_id = ? AND api_key_id != ? AND revoked_at IS NULL",
  );
  const touch = db.prepare(
    "UPDATE api_keys SET last_used_at = ? WHERE api_key_id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
  );
  return {
    insert: (k) =>
      void insert.run(
        k.apiKeyId,
        k.accountId,
        k.keyHash,
        k.hint,
        k.name,
        k.createdAt,
        k.revokedAt,
        k.expiresAt,
        k.lastUsedAt,
      ),
    byHash: (h) => {
      const r = byHash.get(h);
      return r && toRecord(r);
    },
    listForAccount: (id) => list.all(id).map(toRecord),
    revoke: (accountId, apiKeyId, at) =>
      (apiKeyId === "all" ? revokeAll.run(at, accountId) : revokeOne.run(at, accountId, apiKeyId)).changes,
    expireAllBut: (accountId, keep, at) => void expire.run(at, at, accountId, keep),
    touch: (apiKeyId, at, since) => void touch.run(at, apiKeyId, since),
  };
}
