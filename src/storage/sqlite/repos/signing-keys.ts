import type { SigningKeyRepository } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

interface Row {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

/** Signing keys in SQLite. */
export function sqliteSigningKeys(db: Db): Sync<SigningKeyRepository> {
  const list = db.prepare<[], Row>("SELECT * FROM signing_keys ORDER BY created_at");
  const insert = db.prepare(
    "INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const retire = db.prepare("UPDATE signing_keys SET retired_at = ? WHERE kid != ? AND retired_at IS NULL");
  const replace = db.prepare("UPDATE signing_keys SET private_jwk = ? WHERE kid = ? AND private_jwk = ?");
  return {
    list: () =>
      list.all().map((r) => ({
        kid: r.kid,
        alg: r.alg,
        privateJwk: r.private_jwk,
        publicJwk: r.public_jwk,
        createdAt: r.created_at,
        retiredAt: r.retired_at,
      })),
    insert: (k) => void insert.run(k.kid, k.alg, k.privateJwk, k.publicJwk, k.createdAt, k.retiredAt),
    retireAllBut: (kid, at) => void retire.run(at, kid),
    replacePrivateJwk: (kid, was, now) => {
      // The old cell is zeroed, not left in the page's free space: it may be a private key in clear.
      const saved = db.pragma("secure_delete", { simple: true }) as number;
      db.pragma("secure_delete = ON");
      try {
        replace.run(now, kid, was);
      } finally {
        db.pragma(`secure_delete = ${saved}`);
      }
    },
  };
}
