import type { PictureType, StoredPicture } from "../domain/account/operator-picture.js";

/** A picture's columns as both back ends store them (picture_id, picture_type, picture); none: empty and null. */
export function pictureValues(p: StoredPicture | undefined): [string, string, Buffer | null] {
  return [p?.pictureId ?? "", p?.contentType ?? "", p ? Buffer.from(p.bytes) : null];
}

/** A stored row's picture. */
export function pictureOf(r: { picture_id: string; picture_type: string; picture: Buffer }): StoredPicture {
  return { pictureId: r.picture_id, contentType: r.picture_type as PictureType, bytes: r.picture };
}
