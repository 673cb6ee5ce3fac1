import type { SigningKeyRepository } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import { type SigningKeyRow, signingKeyValues, toSigningKey } from "../../token-rows.js";
import type { Db } from "../database.js";

/** Signing keys in SQLite. */
export function sqliteSigningKeys(db: Db): Sync<SigningKeyRepository> {
  const list = db.prepare<[], SigningKeyRow>("SELECT * FROM signing_keys ORDER BY created_at");
  const insert = db.prepare(
    "INSERT INTO signing_keys (kid, alg, private_jwk, public_jwk, created_at, retired_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const retire = db.prepare("UPDATE signing_keys SET retired_at = ? WHERE kid != ? AND retired_at IS NULL");
  const replace = db.prepare("UPDATE signing_keys SET private_jwk = ? WHERE kid = ? AND private_jwk = ?");
  return {
    list: () => list.all().map(toSigningKey),
    insert: (k) => void insert.run(...signingKeyValues(k)),
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
