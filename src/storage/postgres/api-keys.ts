import type { ApiKeyRepository } from "../../domain/account/repository.js";
import { apiKeyValues, KEY_WITH_ACCOUNT_COLUMNS, toApiKey, toApiKeyWithAccount } from "../account-rows.js";
import type { PgDb } from "./db.js";
import { all, execute, first } from "./query.js";

/** Revokes the account's live keys; one of them with `AND api_key_id = $3`. */
const REVOKE = "UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2 AND revoked_at IS NULL";

/** API keys in PostgreSQL (hashes only). */
export function pgApiKeys(db: PgDb): ApiKeyRepository {
  return {
    insert: (k) =>
      execute(
        db,
        "key_insert",
        "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, name, created_at, revoked_at, expires_at, " +
          "last_used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        apiKeyValues(k),
      ),
    byHash: (h) => first(db, "key_by_hash", "SELECT * FROM api_keys WHERE key_hash = $1", [h], toApiKey),
    byHashWithAccount: (h) =>
      first(
        db,
        "key_with_account",
        `SELECT ${KEY_WITH_ACCOUNT_COLUMNS} FROM api_keys k LEFT JOIN accounts a ON a.account_id = k.account_id
         WHERE k.key_hash = $1`,
        [h],
        toApiKeyWithAccount,
      ),
    listForAccount: (accountId) =>
      all(
        db,
        "key_list",
        "SELECT * FROM api_keys WHERE account_id = $1 ORDER BY created_at, api_key_id",
        [accountId],
        toApiKey,
      ),
    revoke: (accountId, apiKeyId, at) =>
      apiKeyId === "all"
        ? db.count("key_revoke_all", REVOKE, [at, accountId])
        : db.count("key_revoke_one", `${REVOKE} AND api_key_id = $3`, [at, accountId, apiKeyId]),
    expireAllBut: (accountId, keep, at) =>
      execute(
        db,
        "key_expire",
        "UPDATE api_keys SET expires_at = least(coalesce(expires_at, $1), $1) WHERE account_id = $2 AND api_key_id " +
          "<> $3 AND revoked_at IS NULL",
        [at, accountId, keep],
      ),
    touch: (id, at, since) =>
      execute(
        db,
        "key_touch",
        "UPDATE api_keys SET last_used_at = $1 WHERE api_key_id = $2 AND (last_used_at IS NULL OR last_used_at < $3)",
        [at, id, since],
      ),
  };
}
