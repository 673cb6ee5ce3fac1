import type { SigningKeyRepository } from "../../domain/token/repository.js";
import { type SigningKeyRow, signingKeyValues, toSigningKey } from "../token-rows.js";
import type { PgDb } from "./db.js";
import { execute } from "./query.js";

/** The channel a signing-key rotation is announced on. */
export const SIGNING_KEYS_CHANNEL = "aiagent_signing_keys";

/** Signing keys, shared by every instance. */
export function pgSigningKeys(db: PgDb): SigningKeyRepository {
  return {
    list: async () =>
      (await db.rows<SigningKeyRow>("sk_list", "SELECT * FROM signing_keys ORDER BY created_at, kid", [])).map(
        toSigningKey,
      ),
    insert: (k) =>
      execute(
        db,
        "sk_insert",
        "INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES ($1, $2, $3, " +
          "$4, $5, $6)",
        signingKeyValues(k),
      ),
    retireAllBut: async (kid, at) => {
      await db.count("sk_retire", "UPDATE signing_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL", [
        at,
        kid,
      ]);
      // Every instance's key ring reloads at once (delivered when this commits), whoever rotated: a server or the
      // `aiagent keys rotate` command.
      await db.rows("sk_notify", `SELECT pg_notify('${SIGNING_KEYS_CHANNEL}', $1)`, [kid]);
    },
    replacePrivateJwk: (kid, was, now) =>
      execute(db, "sk_replace", "UPDATE signing_keys SET private_jwk = $1 WHERE kid = $2 AND private_jwk = $3", [
        now,
        kid,
        was,
      ]),
  };
}
