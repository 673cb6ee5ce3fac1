import type { SigningKeyRecord, SigningKeyRepository } from "../../domain/token/repository.js";
import type { PgDb } from "./db.js";

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The channel a signing-key rotation is announced on. */
export const SIGNING_KEYS_CHANNEL = "aiagent_signing_keys";

const toSigningKey = (r: Row): SigningKeyRecord => ({
  kid: r.kid as string,
  alg: r.alg as string,
  privateJwk: r.private_jwk as string,
  publicJwk: r.public_jwk as string,
  createdAt: Number(r.created_at),
  retiredAt: num(r.retired_at),
});

/** Signing keys, shared by every instance. */
export function pgSigningKeys(db: PgDb): SigningKeyRepository {
  return {
    list: async () =>
      (await db.rows("sk_list", "SELECT * FROM signing_keys ORDER BY created_at, kid", [])).map(toSigningKey),
    insert: async (k) =>
      void (await db.count(
        "sk_insert",
        "INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES ($1, $2, $3, $4, $5, $6)",
        [k.kid, k.alg, k.privateJwk, k.publicJwk, k.createdAt, k.retiredAt],
      )),
    retireAllBut: async (kid, at) => {
      await db.count("sk_retire", "UPDATE signing_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL", [
        at,
        kid,
      ]);
      // Every instance's key ring reloads at once (delivered when this commits), whoever rotated: a server or the
      // `aiagent keys rotate` command.
      await db.rows("sk_notify", `SELECT pg_notify('${SIGNING_KEYS_CHANNEL}', $1)`, [kid]);
    },
    replacePrivateJwk: async (kid, was, now) =>
      void (await db.count(
        "sk_replace",
        "UPDATE signing_keys SET private_jwk = $1 WHERE kid = $2 AND private_jwk = $3",
        [now, kid, was],
      )),
  };
}
