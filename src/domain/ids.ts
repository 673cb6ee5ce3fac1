import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { invalidArgument } from "./errors.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new random uuid (v4). */
export function newId(): string {
  return randomUUID();
}

/** Checks a required uuid field and returns it lower-cased. */
export function requireUuid(field: string, value: string): string {
  if (value === "") throw invalidArgument(field, "is required");
  if (!UUID.test(value)) throw invalidArgument(field, "must be a uuid");
  return value.toLowerCase();
}

/** A new opaque secret: prefix + 256 random bits, base64url. */
export function newSecret(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/**
 * The stored form of an opaque secret: its SHA-256, hex. Secrets are high-entropy, so no salt or stretching is needed.
 */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
