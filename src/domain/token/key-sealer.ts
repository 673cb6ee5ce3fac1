import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/** Shortest secret accepted as a key-encryption key: 32 characters (a generated one is 43). */
export const MIN_SECRET_LENGTH = 32;
const PREFIX = "aes256gcm";

/** A stored private key that none of the configured secrets opens, or that was altered. */
export class KeySealError extends Error {
  override readonly name = "KeySealError";
}

interface Kek {
  id: string;
  key: Buffer;
}

/**
 * Encrypts private keys at rest with AES-256-GCM under key-encryption keys derived from the operator's secrets.
 * The first secret encrypts; every one of them decrypts, so a secret is rotated by putting the new one first and
 * dropping the old once the service has started with both (it re-encrypts under the first at start).
 * Sealed form: aes256gcm:<kek id>:<iv>:<ciphertext>:<tag>, base64url; the additional data binds it to its row.
 */
export class KeySealer {
  private readonly keks: Kek[];

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new KeySealError("no key-encryption secret");
    this.keks = secrets.map((s) => {
      const key = Buffer.from(hkdfSync("sha256", s, "aiagent", "signing-key-encryption", 32));
      // Names the key in the sealed value without revealing anything of it.
      return { id: createHash("sha256").update(key).digest("base64url").slice(0, 8), key };
    });
  }

  /** A fresh random secret, for a generated key-encryption key file. */
  static generateSecret(): string {
    return randomBytes(32).toString("base64url");
  }

  /** Is this value sealed at all (as opposed to a plain JWK written before encryption at rest)? */
  static isSealed(value: string): boolean {
    return value.startsWith(`${PREFIX}:`);
  }

  /** Is this value sealed under the current (first) secret? */
  isCurrent(value: string): boolean {
    return value.startsWith(`${PREFIX}:${this.keks[0]!.id}:`);
  }

  seal(plaintext: string, boundTo: string): string {
    const kek = this.keks[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", kek.key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [PREFIX, kek.id, iv, ct, cipher.getAuthTag()]
      .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
      .join(":");
  }

  open(sealed: string, boundTo: string): string {
    const [prefix, id, iv, ct, tag, ...rest] = sealed.split(":");
    if (prefix !== PREFIX || !id || iv === undefined || ct === undefined || tag === undefined || rest.length > 0)
      throw new KeySealError(`the private key of ${boundTo} is not in the sealed form`);
    const kek = this.keks.find((k) => k.id === id);
    if (!kek)
      throw new KeySealError(
        `the private key of ${boundTo} was encrypted under a secret that is not configured (AIAGENT_SECRETS)`,
      );
    try {
      const decipher = createDecipheriv("aes-256-gcm", kek.key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
    } catch {
      throw new KeySealError(`the private key of ${boundTo} does not decrypt: it was altered`);
    }
  }
}
