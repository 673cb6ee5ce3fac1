import type { OperatorPictureRepository, StoredPicture } from "../../domain/account/operator-picture.js";
import { pictureOf, pictureValues } from "../picture-rows.js";
import type { PgDb } from "./db.js";

/** The people's uploaded pictures in PostgreSQL, in their profile's row. */
export function pgPictures(db: PgDb): OperatorPictureRepository {
  return {
    setPicture: async (accountId: string, email: string, p: StoredPicture | undefined, now: number) =>
      void (await db.count(
        "picture_set",
        `INSERT INTO operator_profiles (account_id, email, display_name, avatar_url, updated_at, picture_id,
           picture_type, picture) VALUES ($1, $2, '', '', $3, $4, $5, $6)
         ON CONFLICT (account_id, email) DO UPDATE SET picture_id = excluded.picture_id,
           picture_type = excluded.picture_type, picture = excluded.picture, updated_at = excluded.updated_at`,
        [accountId, email.toLowerCase(), now, ...pictureValues(p)],
      )),
    picture: async (pictureId) => {
      const [r] = await db.rows(
        "picture_get",
        "SELECT picture_id, picture_type, picture FROM operator_profiles WHERE picture_id = $1 LIMIT 1",
        [pictureId],
      );
      return r && pictureOf(r as Parameters<typeof pictureOf>[0]);
    },
    pictureIdOf: async (accountId, email) => {
      const [r] = await db.rows(
        "picture_id_of",
        "SELECT picture_id FROM operator_profiles WHERE account_id = $1 AND email = $2",
        [accountId, email.toLowerCase()],
      );
      return (r?.picture_id as string | undefined) || undefined;
    },
  };
}
