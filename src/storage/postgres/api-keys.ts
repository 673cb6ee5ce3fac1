import type { ApiKeyRecord, ApiKeyRepository } from "../../domain/account/repository.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toKey = (r: Row): ApiKeyRecord => ({
  apiKeyId: r.api_key_id as string,
  accountId: r.account_id as string,
  keyHash: r.key_hash as string,
  hint: r.hint as string,
  name: r.name as string,
  createdAt: Number(r.created_at),
  revokedAt: num(r.revoked_at),
  expiresAt: num(r.expires_at),
  lastUsedAt: num(r.last_used_at),
});

/** API keys in PostgreSQL (hashes only). */
export function pgApiKeys(db: PgDb): ApiKeyRepository {
  return {
    insert: async (k) =>
      void (await db.count(
        "key_insert",
        "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, name, created_at, revoked_at, expires_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        [k.apiKeyId, k.accountId, k.keyHash, k.hint, k.name, k.createdAt, k.revokedAt, k.expiresAt, k.lastUsedAt],
      )),
    byHash: async (h) =>
      (await db.rows("key_by_hash", "SELECT * FROM api_keys WHERE key_hash = $1", [h])).map(toKey)[0],
    listForAccount: async (accountId) =>
      (
        await db.rows("key_list", "SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, api_key_id", [
          accountId,
        ])
      ).map(toKey),
    revoke: (accountId, apiKeyId, at) =>
      apiKeyId === "all"
        ? db.count(
            "key_revoke_all",
            "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL",
            [at, accountId],
          )
        : db.count(
            "key_revoke_one",
            "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND api_key_id = $3 AND revoked_at IS NULL",
            [at, accountId, apiKeyId],
          ),
    expireAllBut: async (accountId, keep, at) =>
      void (await db.count(
        "key_expire",
        "UPDATE api_keys SET expires_at = least(coalesce(expires_at, $1), $1) WHERE account_id = $2 AND api_key_id <> $3 AND revoked_at IS NULL",
        [at, accountId, keep],
      )),
    touch: async (id, at, since) =>
      void (await db.count(
        "key_touch",
        "UPDATE api_keys SET last_used_at = $1 WHERE api_key_id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
        [at, id, since],
      )),
  };
}
