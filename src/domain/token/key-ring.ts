import { randomBytes } from "node:crypto";
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import type { Clock } from "../clock.js";
import type { SigningKeyRepository } from "./repository.js";

/** The one signature algorithm: asymmetric, pinned; nothing else is ever accepted. */
export const SIGNING_ALG = "ES256";

interface LoadedKey {
  kid: string;
  alg: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  retiredAt: number | null;
}

/** The signing keys in memory, imported once as CryptoKeys (importing per call halves jose's speed). */
export class KeyRing {
  private signing!: { kid: string; key: CryptoKey };
  private byKid = new Map<string, LoadedKey>();

  private constructor(
    private readonly repo: SigningKeyRepository,
    private readonly clock: Clock,
    private readonly maxTokenLifetimeMs: number,
  ) {}

  /** Loads the stored keys, making and storing the first one when there is none. */
  static async open(repo: SigningKeyRepository, clock: Clock, maxTokenLifetimeMs: number): Promise<KeyRing> {
    const ring = new KeyRing(repo, clock, maxTokenLifetimeMs);
    if (repo.list().every((k) => k.retiredAt !== null)) await ring.rotate();
    else await ring.reload();
    return ring;
  }

  /** Makes a new signing key; older keys stay valid for verification until their tokens have expired. */
  async rotate(): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = randomBytes(12).toString("base64url");
    const now = this.clock.now();
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: "sig" };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    this.repo.insert({
      kid,
      alg: SIGNING_ALG,
      privateJwk: JSON.stringify(privateJwk),
      publicJwk: JSON.stringify(publicJwk),
      createdAt: now,
      retiredAt: null,
    });
    this.repo.retireAllBut(kid, now);
    await this.reload();
    return kid;
  }

  /** Re-reads the keys from storage (another process may have rotated them). */
  async reload(): Promise<void> {
    const records = this.repo.list();
    const byKid = new Map<string, LoadedKey>();
    let signing: { kid: string; key: CryptoKey } | undefined;
    for (const r of records) {
      if (r.alg !== SIGNING_ALG) continue;
      const publicJwk = JSON.parse(r.publicJwk) as JWK;
      byKid.set(r.kid, {
        kid: r.kid,
        alg: r.alg,
        publicJwk,
        verifyKey: (await importJWK(publicJwk, SIGNING_ALG)) as CryptoKey,
        retiredAt: r.retiredAt,
      });
      if (r.retiredAt === null)
        signing = { kid: r.kid, key: (await importJWK(JSON.parse(r.privateJwk) as JWK, SIGNING_ALG)) as CryptoKey };
    }
    if (!signing) throw new Error("no active signing key");
    this.signing = signing;
    this.byKid = byKid;
  }

  /** The key new tokens are signed with. */
  get current(): { kid: string; key: CryptoKey } {
    return this.signing;
  }

  /** The verification key for a kid, if it is still trusted and was made for exactly this algorithm. */
  verifyKey(kid: unknown, alg: unknown): CryptoKey | undefined {
    if (typeof kid !== "string") return undefined;
    const k = this.byKid.get(kid);
    if (!k || k.alg !== alg || !this.stillTrusted(k)) return undefined;
    return k.verifyKey;
  }

  /** The public keys to publish: every key that can still have live tokens. */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.byKid.values()].filter((k) => this.stillTrusted(k)).map((k) => k.publicJwk) };
  }

  private stillTrusted(k: LoadedKey): boolean {
    return k.retiredAt === null || k.retiredAt + this.maxTokenLifetimeMs > this.clock.now();
  }
}
