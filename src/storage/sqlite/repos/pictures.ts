import type { OperatorPictureRepository, StoredPicture } from "../../../domain/account/operator-picture.js";
import { pictureOf, pictureValues } from "../../picture-rows.js";
import type { Sync } from "../../sync.js";
import type { Db } from "../database.js";

/** The people's uploaded pictures in SQLite, in their profile's row. */
export function sqlitePictures(db: Db): Sync<OperatorPictureRepository> {
  const set = db.prepare(
    `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, picture_id, picture_type,
       picture) VALUES (?, ?, '', '', ?, ?, ?, ?)
     ON CONFLICT (account_id, email) DO UPDATE SET picture_id = excluded.picture_id,
       picture_type = excluded.picture_type, picture = excluded.picture, updated_at = excluded.updated_at`,
  );
  const byId = db.prepare<[string], { picture_id: string; picture_type: string; picture: Buffer }>(
    "SELECT picture_id, picture_type, picture FROM operator_profiles WHERE picture_id = ? LIMIT 1",
  );
  const idOf = db.prepare<[string, string], { picture_id: string }>(
    "SELECT picture_id FROM operator_profiles WHERE account_id = ? AND email = ?",
  );
  return {
    setPicture: (accountId: string, email: string, p: StoredPicture | undefined, now: number) =>
      void set.run(accountId, email.toLowerCase(), now, ...pictureValues(p)),
    picture: (pictureId: string) => {
      const r = byId.get(pictureId);
      return r && pictureOf(r);
    },
    pictureIdOf: (accountId: string, email: string) =>
      idOf.get(accountId, email.toLowerCase())?.picture_id || undefined,
  };
}
