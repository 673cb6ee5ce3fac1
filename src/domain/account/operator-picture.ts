import { createHash } from "node:crypto";
import type { AccountCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { invalidArgument, notFound } from "../errors.js";

/**
 * At most this large: the JSON route's body is at most 64 KiB and carries the image as base64 (4 bytes for 3), so
 * 45 KiB is what fits; plenty for a 128 px picture.
 */
export const MAX_PICTURE_BYTES = 45 * 1024;

/** The types a picture may be, told by its first bytes: a declared type is never trusted. */
export type PictureType = "image/png" | "image/jpeg" | "image/webp";

/** A stored picture: its id (its address), its type and its bytes. */
export interface StoredPicture {
  pictureId: string;
  contentType: PictureType;
  bytes: Uint8Array;
}

/** Storage of the people's pictures, beside their profile (one per account and lower-cased e-mail). */
export interface OperatorPictureRepository {
  /** Sets (or, undefined, removes) the person's picture. */
  setPicture(accountId: string, email: string, picture: StoredPicture | undefined, now: number): Promise<void>;
  picture(pictureId: string): Promise<StoredPicture | undefined>;
  /** The person's picture's id; undefined when they have none. */
  pictureIdOf(accountId: string, email: string): Promise<string | undefined>;
}

/** Where the service answers a picture (the frame's CSP allows the service's own images). */
export function picturePath(pictureId: string): string {
  return `/v1/operator_pictures/${pictureId}`;
}

/**
 * A person's picture's id, the same wherever it is computed (a conversation's summary names it from its assignee
 * alone). Unguessable without the account's id; it tells nothing but the picture, which customers see anyway.
 */
export function pictureIdOf(accountId: string, email: string): string {
  return createHash("sha256").update(`${accountId}\n${email.toLowerCase()}`).digest("hex").slice(0, 32);
}

/** The image's type by its magic bytes; anything else is refused. */
export function pictureType(b: Uint8Array): PictureType {
  const starts = (sig: number[], at = 0) => sig.every((x, i) => b[at + i] === x);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (starts([0xff, 0xd8, 0xff])) return "image/jpeg";
  // RIFF....WEBP
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return "image/webp";
  throw invalidArgument("image", "must be a PNG, JPEG or WebP image");
}

/** A picture's type, when it is one: at most MAX_PICTURE_BYTES of PNG, JPEG or WebP; anything else names `image`. */
export function requirePicture(b: Uint8Array): PictureType {
  if (b.length > MAX_PICTURE_BYTES)
    throw invalidArgument("image", `must be at most ${MAX_PICTURE_BYTES} bytes (${b.length} given)`);
  return pictureType(b);
}

/** The people's pictures: set by themselves, served to anyone with the address. */
export class OperatorPictures {
  constructor(private readonly d: { pictures: OperatorPictureRepository; clock: Clock }) {}

  /** Sets the caller's picture; empty bytes remove it. Answers its id ("" when removed). */
  async set(caller: AccountCaller, bytes: Uint8Array): Promise<string> {
    if (bytes.length === 0) {
      await this.d.pictures.setPicture(caller.accountId, caller.email, undefined, this.d.clock.now());
      return "";
    }
    const picture = {
      pictureId: pictureIdOf(caller.accountId, caller.email),
      contentType: requirePicture(bytes),
      bytes,
    };
    await this.d.pictures.setPicture(caller.accountId, caller.email, picture, this.d.clock.now());
    return picture.pictureId;
  }

  /** The caller's picture's address; "" when they have none. */
  pathOf(caller: AccountCaller): Promise<string> {
    return this.pathFor(caller.accountId, caller.email);
  }

  /** The picture's address of a person of the account ("" when they have none, or for the AI agent). */
  async pathFor(accountId: string, email: string): Promise<string> {
    if (!email.includes("@")) return "";
    const id = await this.d.pictures.pictureIdOf(accountId, email);
    return id ? picturePath(id) : "";
  }

  async get(pictureId: string): Promise<StoredPicture> {
    const p = /^[0-9a-f]{32}$/.test(pictureId) ? await this.d.pictures.picture(pictureId) : undefined;
    if (!p) throw notFound("picture");
    return p;
  }
}
