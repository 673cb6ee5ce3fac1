import { createPrivateKey, type KeyObject, randomBytes } from "node:crypto";
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import type { Clock } from "../clock.js";
import type { Transact } from "../unit.js";
import { KeySealer } from "./key-sealer.js";
import type { SigningKeyRecord, SigningKeyRepository } from "./repository.js";

/** The one signature algorithm: asymmetric, pinned; nothing else is ever accepted. */
export const SIGNING_ALG = "ES256";

interface LoadedKey {
  kid: string;
  alg: string;
  publicJwk: JWK;
  verifyKey: CryptoKey;
  retiredAt: number | null;
}

/** How a key ring follows rotations made by other processes (the `aiagent keys rotate` command, other instances). */
export interface KeyRingOptions {
  /** Longest lifetime of a token this service signs. */
  maxTokenLifetimeMs: number;
  /** Encrypts private keys at rest under the operator's secret. */
  sealer: KeySealer;
  /** Storage is re-read when the ring is used and this long has passed since the last look (default 30 s). */
  refreshIntervalMs?: number;
  /** A token with an unknown kid re-reads storage at most this often (default 1 s), so garbage kids cost nothing. */
  unknownKidRetryMs?: number;
  /**
   * The store's unit of work. Making the first key and rotating each read the keys and write them: two instances
   * doing it at once would each retire the other's new key and leave none active. In one unit of work, one of them
   * is run again after the other (PostgreSQL's SERIALIZABLE; SQLite runs one writer at a time).
   */
  transaction?: Transact<{ signingKeys: SigningKeyRepository }>;
}

/** Default of KeyRingOptions.refreshIntervalMs: a rotation reaches every running instance within half a minute. */
export const DEFAULT_KEY_REFRESH_MS = 30_000;

/**
 * The signing keys in memory, imported once: public keys as CryptoKeys for jose's verification (importing per call
 * halves its speed), the active private key as a node:crypto KeyObject for signing (see JwtStrategy). Another
 * process may rotate the keys in the shared database: the ring looks again at most every refresh interval when it
 * is used (signing, publishing, verifying), and at once (rate-limited) when a token names a kid it does not know.
 */
export class KeyRing {
  private signing!: { kid: string; key: KeyObject };
  private byKid = new Map<string, LoadedKey>();
  private fingerprint = "";
  private nextCheckAt = 0;
  private lastUnknownKidCheck = Number.NEGATIVE_INFINITY;
  private reloading: Promise<void> | undefined;
  private readonly refreshMs: number;
  private readonly unknownKidRetryMs: number;
  private readonly trustRetiredMs: number;
  private readonly sealer: KeySealer;
  private readonly unit: <T>(fn: (keys: SigningKeyRepository) => Promise<T>) => Promise<T>;

  private constructor(
    private readonly repo: SigningKeyRepository,
    private readonly clock: Clock,
    o: KeyRingOptions,
  ) {
    this.refreshMs = o.refreshIntervalMs ?? DEFAULT_KEY_REFRESH_MS;
    this.unknownKidRetryMs = o.unknownKidRetryMs ?? 1000;
    // An instance that has not seen a rotation yet signs with the old key for up to one more interval.
    this.trustRetiredMs = o.maxTokenLifetimeMs + this.refreshMs;
    this.sealer = o.sealer;
    const transaction = o.transaction;
    this.unit = transaction ? (fn) => transaction((tx) => fn(tx.signingKeys)) : (fn) => fn(repo);
  }

  /**
   * Loads the stored keys, making and storing the first one when there is none. Private keys stored in clear
   * (before encryption at rest) or under an older secret are first encrypted under the current one.
   */
  static async open(repo: SigningKeyRepository, clock: Clock, o: KeyRingOptions): Promise<KeyRing> {
    const ring = new KeyRing(repo, clock, o);
    for (const k of await repo.list()) {
      if (o.sealer.isCurrent(k.privateJwk)) continue;
      const plain = KeySealer.isSealed(k.privateJwk) ? o.sealer.open(k.privateJwk, k.kid) : k.privateJwk;
      await repo.replacePrivateJwk(k.kid, k.privateJwk, o.sealer.seal(plain, k.kid));
    }
    if ((await repo.list()).every((k) => k.retiredAt !== null)) await ring.install(await ring.make(), true);
    await ring.reload();
    return ring;
  }

  /** True when the refresh interval has passed since the last look at storage (fresh() would read it). */
  due(): boolean {
    return this.clock.now() >= this.nextCheckAt;
  }

  /** Picks up a rotation made elsewhere: re-reads storage if the refresh interval has passed since the last look. */
  async fresh(): Promise<void> {
    const now = this.clock.now();
    if (now < this.nextCheckAt) return;
    this.nextCheckAt = now + this.refreshMs;
    try {
      await this.reloadIfChanged();
    } catch {
      // The keys in memory stay in use; storage is tried again after the next interval.
    }
  }

  /**
   * The verification key for a kid; a kid this ring has never seen (another instance may have just rotated)
   * re-reads storage first, at most once per unknownKidRetryMs.
   */
  async verifyKeyFresh(kid: unknown, alg: unknown): Promise<CryptoKey | undefined> {
    const key = this.verifyKey(kid, alg);
    if (key || typeof kid !== "string" || this.byKid.has(kid)) return key;
    const now = this.clock.now();
    if (now - this.lastUnknownKidCheck < this.unknownKidRetryMs) return undefined;
    this.lastUnknownKidCheck = now;
    try {
      await this.reloadIfChanged();
    } catch {
      return undefined;
    }
    return this.verifyKey(kid, alg);
  }

  private async reloadIfChanged(): Promise<void> {
    if (this.reloading) return this.reloading;
    if (fingerprintOf(await this.repo.list()) === this.fingerprint) return;
    // Another caller may have started the reload while the list was read.
    if (this.reloading) return this.reloading;
    this.reloading = this.reload().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /** Makes a new signing key; older keys stay valid for verification until their tokens have expired. */
  async rotate(): Promise<string> {
    const k = await this.make();
    await this.install(k, false);
    await this.reload();
    return k.kid;
  }

  /** A new key pair as stored: private key sealed, not yet active anywhere. */
  private async make(): Promise<SigningKeyRecord> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = randomBytes(12).toString("base64url");
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: "sig" };
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    return {
      kid,
      alg: SIGNING_ALG,
      privateJwk: this.sealer.seal(JSON.stringify(privateJwk), kid),
      publicJwk: JSON.stringify(publicJwk),
      createdAt: this.clock.now(),
      retiredAt: null,
    };
  }

  /**
   * Stores the key and retires every other, in one unit of work (which may run more than once, so the key is made
   * before it). `onlyIfNone`: the first key, which an instance starting at the same time may have made already.
   */
  private install(k: SigningKeyRecord, onlyIfNone: boolean): Promise<void> {
    return this.unit(async (keys) => {
      if (onlyIfNone && (await keys.list()).some((r) => r.retiredAt === null)) return;
      const now = this.clock.now();
      await keys.insert({ ...k, createdAt: now });
      await keys.retireAllBut(k.kid, now);
    });
  }

  /** Re-reads the keys from storage (another process may have rotated them). */
  async reload(): Promise<void> {
    const records = await this.repo.list();
    const byKid = new Map<string, LoadedKey>();
    let signing: { kid: string; key: KeyObject } | undefined;
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
        signing = {
          kid: r.kid,
          key: createPrivateKey({ key: JSON.parse(this.sealer.open(r.privateJwk, r.kid)), format: "jwk" }),
        };
    }
    if (!signing) throw new Error("no active signing key");
    this.signing = signing;
    this.byKid = byKid;
    this.fingerprint = fingerprintOf(records);
    this.nextCheckAt = this.clock.now() + this.refreshMs;
  }

  /** The key new tokens are signed with. */
  get current(): { kid: string; key: KeyObject } {
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
    return k.retiredAt === null || k.retiredAt + this.trustRetiredMs > this.clock.now();
  }
}

/** What identifies a set of stored keys: each kid and whether (and when) it was retired. */
function fingerprintOf(records: readonly SigningKeyRecord[]): string {
  return records.map((r) => `${r.kid}:${r.retiredAt ?? ""}`).join(",");
}
