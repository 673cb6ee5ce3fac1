import type { LaunchCodeRepository } from "../../../domain/token/repository.js";
import type { Sync } from "../../sync.js";
import { type LaunchCodeRow, launchCodeValues, toLaunchCode } from "../../token-rows.js";
import type { Db } from "../database.js";

/** One-time launch codes of the chat frame in SQLite (hashes only). */
export function sqliteLaunchCodes(db: Db): Sync<LaunchCodeRepository> {
  const insert = db.prepare(
    `INSERT INTO launch_codes (code_hash, account_id, chatbot_id, user_id, session_id, origin, created_at, expires_at,
       used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byHash = db.prepare<[string], LaunchCodeRow>("SELECT * FROM launch_codes WHERE code_hash = ?");
  const use = db.prepare("UPDATE launch_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL");
  return {
    insert: (r) => void insert.run(...launchCodeValues(r)),
    byHash: (h) => {
      const r = byHash.get(h);
      return r && toLaunchCode(r);
    },
    markUsed: (h, at) => use.run(at, h).changes === 1,
  };
}
