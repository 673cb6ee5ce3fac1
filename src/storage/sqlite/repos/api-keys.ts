import type { ApiKeyRecord, ApiKeyRepository } from "../../../domain/account/repository.js";
import {
  type ApiKeyRow,
  apiKeyValues,
  fromKeyWithAccountValues,
  KEY_WITH_ACCOUNT_VALUES,
  type KeyWithAccountValues,
  toApiKey,
} from "../../account-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";
import { fileState, UnchangedMemo } from "./unchanged-memo.js";

/** API keys (hashes only) in SQLite. */
export function sqliteApiKeys(db: Db): Sync<ApiKeyRepository> {
  const insert = db.prepare(
    "INSERT INTO api_keys (api_key_id, account_id, key_hash, hint, name, created_at, revoked_at, expires_at, " +
      "last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const byHash = db.prepare<[string], ApiKeyRow>("SELECT * FROM api_keys WHERE key_hash = ?");
  // Read on every token issue: as an array (see fromKeyWithAccountValues).
  const withAccount = db
    .prepare<[string], KeyWithAccountValues>(
      `SELECT ${KEY_WITH_ACCOUNT_VALUES} FROM api_keys k LEFT JOIN accounts a ON a.account_id = k.account_id
     WHERE k.key_hash = ?`,
    )
    .raw(true);
  const list = db.prepare<[string], ApiKeyRow>(
    "SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, api_key_id",
  );
  const revokeOne = db.prepare(
    "UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND api_key_id = ? AND revoked_at IS NULL",
  );
  const revokeAll = db.prepare("UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL");
  const expire = db.prepare(
    "UPDATE api_keys SET expires_at = min(coalesce(expires_at, ?), ?) WHERE account_id = ? AND api_key_id != ? AND " +
      "revoked_at IS NULL",
  );
  const touch = db.prepare(
    "UPDATE api_keys SET last_used_at = ? WHERE api_key_id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
  );
  // Read by every call with an ID token minted with a key (the key must still work): kept while the file is unchanged.
  const lists = new UnchangedMemo<ApiKeyRecord[]>(fileState(db));
  return {
    insert: (k) => void insert.run(...apiKeyValues(k)),
    byHash: (h) => {
      const r = byHash.get(h);
      return r && toApiKey(r);
    },
    byHashWithAccount: (h) => {
      const r = withAccount.get(h);
      return r && fromKeyWithAccountValues(r);
    },
    listForAccount: (id) => lists.get(id, () => list.all(id).map(toApiKey)),
    revoke: (accountId, apiKeyId, at) =>
      (apiKeyId === "all" ? revokeAll.run(at, accountId) : revokeOne.run(at, accountId, apiKeyId)).changes,
    expireAllBut: (accountId, keep, at) => void expire.run(at, at, accountId, keep),
    touch: (apiKeyId, at, since) => void touch.run(at, apiKeyId, since),
  };
}
