import { createHmac, randomBytes } from "node:crypto";

/** A new salt for one rotation, stored beside the retired token's hash. */
export function newRotationSalt(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * The secret part of the refresh token that replaces `token`: derived from it and the rotation's salt, so only the
 * holder of the retired token can get it again (a retried refresh within the grace), and the service stores neither
 * token, only hashes.
 */
export function successorSecret(token: string, salt: string): string {
  return createHmac("sha256", salt).update(token).digest("base64url");
}
