import { type KeyObject, sign } from "node:crypto";
import { decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from "jose";
import type { Clock } from "../clock.js";
import { unauthenticated } from "../errors.js";
import { randomBase64url } from "../ids.js";
import { type KeyRing, SIGNING_ALG } from "./key-ring.js";

/**
 * This service is the only issuer and verifier of its tokens, so a token's `exp` is enforced exactly: the instant the
 * service reports (`expires_at`) is the first instant the token is refused. Only the issue instants (`iat`, `nbf`)
 * get a leeway, below a second, for instances whose clocks differ slightly (keep them NTP-synchronised).
 */
export const ISSUE_SKEW_MS = 500;
// jose compares whole seconds and applies one tolerance to every claim; it gets one second (so it never refuses what
// the exact checks below accept), and those checks then hold each claim to its own bound in milliseconds.
const JOSE_TOLERANCE_S = 1;

/** The two kinds of JWT this service signs; each has its own audience and `typ`, never interchangeable. */
export const TOKEN_KINDS = {
  access: { typ: "at+jwt", audience: "aiagent:frame" },
  id: { typ: "id+jwt", audience: "aiagent:account-api" },
} as const;
export type TokenKind = keyof typeof TOKEN_KINDS;

/** What a verified access token says. */
export interface AccessClaims {
  userId: string;
  chatbotId: string;
  accountId: string;
  /** The session (refresh token) the access token was issued from, when it names one (`sid`). */
  sessionId?: string | undefined;
  issuedAt: number;
  expiresAt: number;
}

/** What a verified ID token says. */
export interface IdClaims {
  accountId: string;
  email: string;
  /** The token's own session (`sid`): what signing out of the console revokes. */
  sessionId?: string | undefined;
  /** The API key it was minted with (`akid`); the token dies with the key. */
  apiKeyId?: string | undefined;
  /** Minted with the person's password (`amr: pwd`); the token dies when the password changes. */
  viaPassword?: boolean | undefined;
  issuedAt: number;
  expiresAt: number;
}

const FORBIDDEN_HEADERS = ["jku", "x5u", "jwk", "x5c", "crit"];

/** The claims every token carries but its subject (`sub`), set by JwtStrategy when it signs. */
interface RegisteredClaims {
  /** The issue instant in milliseconds. */
  ims: number;
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  jti: string;
}

/** Makes and checks the service's JWTs; verified access tokens are cached until they expire. */
export class JwtStrategy {
  private readonly accessCache: VerifiedCache<AccessClaims>;
  private readonly idCache: VerifiedCache<IdClaims>;
  private readonly headers: Partial<Record<TokenKind, { kid: string; encoded: string }>> = {};

  constructor(
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    private readonly issuer: string,
    cacheSize = 50_000,
  ) {
    this.accessCache = new VerifiedCache(cacheSize);
    // Few accounts call the account API at once; their ID tokens are reused for an hour.
    this.idCache = new VerifiedCache(Math.max(1, Math.floor(cacheSize / 10)));
  }

  /** Signs an access token for (account, chatbot, user), from a session when it names one, valid for ttlSeconds. */
  async signAccess(
    c: { accountId: string; chatbotId: string; userId: string; sessionId?: string | undefined },
    ttlSeconds: number,
  ): Promise<{ token: string; expiresAt: number }> {
    return this.sign("access", ttlSeconds, (r) => ({
      cid: c.chatbotId,
      acc: c.accountId,
      sid: c.sessionId || undefined,
      ims: r.ims,
      iss: r.iss,
      aud: r.aud,
      sub: c.userId,
      iat: r.iat,
      exp: r.exp,
      jti: r.jti,
    }));
  }

  /**
   * Signs an ID token for an account valid for ttlSeconds, naming the credentials it descends from (its session,
   * the API key or the password it was minted with), so revoking any of them revokes it.
   */
  async signId(
    c: {
      accountId: string;
      email: string;
      sessionId?: string;
      apiKeyId?: string | undefined;
      viaPassword?: boolean;
    },
    ttlSeconds: number,
  ): Promise<{ token: string; expiresAt: number }> {
    return this.sign("id", ttlSeconds, (r) => ({
      email: c.email,
      sid: c.sessionId || undefined,
      akid: c.apiKeyId || undefined,
      amr: c.viaPassword ? "pwd" : undefined,
      ims: r.ims,
      iss: r.iss,
      aud: r.aud,
      sub: c.accountId,
      iat: r.iat,
      exp: r.exp,
      jti: r.jti,
    }));
  }

  /**
   * An access token verified before and not expired, answered without a promise (the frame's every call: an async
   * verifyAccess costs two promises and a turn of the microtask queue even when kept); undefined when not kept.
   * Throws when it has expired.
   */
  keptAccess(token: string): AccessClaims | undefined {
    const hit = this.accessCache.get(token, this.clock.now());
    if (hit === "expired") throw unauthenticated("the access token has expired", "TokenExpiredError");
    return hit;
  }

  /** Verifies an access token; a token seen before is answered from the cache (expiry still checked). */
  async verifyAccess(token: string): Promise<AccessClaims> {
    const hit = this.keptAccess(token);
    if (hit) return hit;
    const p = await this.verify(token, "access");
    // Its lineage (`sid`) is required: a token naming none would escape the revocation of its session.
    if (typeof p.cid !== "string" || typeof p.acc !== "string" || typeof p.sid !== "string")
      throw unauthenticated("the access token is invalid");
    const claims: AccessClaims = {
      userId: p.sub!,
      chatbotId: p.cid,
      accountId: p.acc,
      sessionId: p.sid,
      issuedAt: issuedAtMs(p),
      expiresAt: p.exp! * 1000,
    };
    this.accessCache.set(token, claims);
    return claims;
  }

  /**
   * An ID token verified before and not expired, answered without a promise (every console call presents one);
   * undefined when not kept. Throws when it has expired.
   */
  keptId(token: string): IdClaims | undefined {
    const hit = this.idCache.get(token, this.clock.now());
    if (hit === "expired") throw unauthenticated("the ID token has expired", "TokenExpiredError");
    return hit;
  }

  /** Verifies an ID token; like access tokens, each is verified once and then answered from the cache. */
  async verifyId(token: string): Promise<IdClaims> {
    const hit = this.keptId(token);
    if (hit) return hit;
    const p = await this.verify(token, "id");
    // Its lineage is required: its own session (`sid`), and the API key (`akid`) or the password (`amr: pwd`) it was
    // minted with. A token naming none would escape the revocation of what it descends from.
    const minted = typeof p.akid === "string" || p.amr === "pwd";
    if (typeof p.email !== "string" || typeof p.sid !== "string" || !minted)
      throw unauthenticated("the ID token is invalid");
    const claims: IdClaims = {
      accountId: p.sub!,
      email: p.email,
      sessionId: p.sid,
      ...(typeof p.akid === "string" ? { apiKeyId: p.akid } : {}),
      ...(p.amr === "pwd" ? { viaPassword: true } : {}),
      issuedAt: issuedAtMs(p),
      expiresAt: p.exp! * 1000,
    };
    this.idCache.set(token, claims);
    return claims;
  }

  /**
   * Signs the payload `claims` makes of the registered claims of a token issued now. Each kind writes its whole payload
   * as one object literal, its claims first, an absent one `undefined` (JSON.stringify leaves it out): spreading its
   * own claims into the registered ones made V8 add each property after the spread on its slow path, 9–10 µs a token.
   */
  private async sign(
    kind: TokenKind,
    ttlSeconds: number,
    claims: (registered: RegisteredClaims) => object,
  ): Promise<{ token: string; expiresAt: number }> {
    if (this.keys.due()) await this.keys.fresh();
    const { kid, key } = this.keys.current;
    const nowMs = this.clock.now();
    const nowS = Math.floor(nowMs / 1000);
    const exp = nowS + ttlSeconds;
    // `ims`: the issue instant in milliseconds, so a revocation stops exactly the tokens issued before it.
    const payload = claims({
      ims: nowMs,
      iss: this.issuer,
      aud: TOKEN_KINDS[kind].audience,
      iat: nowS,
      exp,
      jti: randomBase64url(12),
    });
    const token = await signCompact(this.encodedHeader(kind, kid), payload, key);
    return { token, expiresAt: exp * 1000 };
  }

  /** The protected header of a kind of token signed with `kid`, base64url; the same for every token until a rotation. */
  private encodedHeader(kind: TokenKind, kid: string): string {
    const known = this.headers[kind];
    if (known?.kid === kid) return known.encoded;
    const encoded = base64url(JSON.stringify({ alg: SIGNING_ALG, kid, typ: TOKEN_KINDS[kind].typ }));
    this.headers[kind] = { kid, encoded };
    return encoded;
  }

  private async verify(token: string, kind: TokenKind): Promise<JWTPayload> {
    const label = kind === "access" ? "access token" : "ID token";
    if (token.length > 4096) throw unauthenticated(`the ${label} is invalid`);
    let header: Record<string, unknown>;
    try {
      header = decodeProtectedHeader(token) as Record<string, unknown>;
    } catch {
      throw unauthenticated(`the ${label} is invalid`);
    }
    // Keys come only from our own key set: no header may point elsewhere.
    if (FORBIDDEN_HEADERS.some((h) => h in header)) throw unauthenticated(`the ${label} is invalid`);
    const now = this.clock.now();
    try {
      const { payload } = await jwtVerify(
        token,
        async (h) => {
          // The algorithm is pinned per key: a kid resolves only with the algorithm its key was made for.
          const key = await this.keys.verifyKeyFresh(h.kid, h.alg);
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        {
          algorithms: [SIGNING_ALG],
          issuer: this.issuer,
          audience: TOKEN_KINDS[kind].audience,
          typ: TOKEN_KINDS[kind].typ,
          clockTolerance: JOSE_TOLERANCE_S,
          requiredClaims: ["iss", "aud", "sub", "iat", "exp", "jti"],
          currentDate: new Date(now),
        },
      );
      if (typeof payload.sub !== "string" || payload.sub === "")
        throw new errors.JWTClaimValidationFailed("sub", payload);
      if (payload.exp! * 1000 <= now) throw new errors.JWTExpired('"exp" claim timestamp check failed', payload, "exp");
      // jose checks iat only with maxTokenAge; a token from the future is as wrong as an expired one.
      if (payload.iat! * 1000 > now + ISSUE_SKEW_MS) throw new errors.JWTClaimValidationFailed("iat", payload);
      if (payload.nbf !== undefined && payload.nbf * 1000 > now + ISSUE_SKEW_MS)
        throw new errors.JWTClaimValidationFailed("nbf", payload);
      return payload;
    } catch (e) {
      if (e instanceof errors.JWTExpired) throw unauthenticated(`the ${label} has expired`, "TokenExpiredError");
      throw unauthenticated(`the ${label} is invalid`);
    }
  }
}

const base64url = (text: string) => Buffer.from(text).toString("base64url");

/**
 * A JWS compact serialisation (RFC 7515) of the payload, signed with ES256 (ECDSA P-256, SHA-256; the signature as
 * r‖s, RFC 7518 §3.4). Signed with node:crypto rather than jose, which signs through WebCrypto: its argument
 * checks and promise plumbing cost twice the signature itself. With a callback the signature is computed on the
 * thread pool, as WebCrypto's is, so the event loop does not wait for it. jose still verifies every token.
 */
function signCompact(encodedHeader: string, payload: object, key: KeyObject): Promise<string> {
  const input = `${encodedHeader}.${base64url(JSON.stringify(payload))}`;
  // The signing input is base64url text: ASCII, so latin1 copies it byte for byte (no UTF-8 encoding pass).
  return new Promise((resolve, reject) =>
    sign("sha256", Buffer.from(input, "latin1"), { key, dsaEncoding: "ieee-p1363" }, (err, signature) =>
      err ? reject(err) : resolve(`${input}.${signature.toString("base64url")}`),
    ),
  );
}

/**
 * Claims of tokens whose signature and claims were verified, keyed by the whole token string (so only that exact
 * token hits), kept until they expire, and bounded: the oldest entry goes first. Internal to JwtStrategy.
 */
class VerifiedCache<T extends { expiresAt: number }> {
  /**
   * By the token's last characters (its signature's), each entry holding the whole token: a lookup hashes those
   * characters, not the whole token (a new string on every call, some 450 characters: a few thousand instructions
   * each time), and is a hit only when the whole token is the same. Two tokens that end alike only take each other's
   * place (a verification more), never each other's claims.
   */
  private readonly map = new Map<string, { token: string; claims: T }>();

  constructor(private readonly max: number) {}

  get(token: string, now: number): T | "expired" | undefined {
    const key = tail(token);
    const hit = this.map.get(key);
    if (!hit || hit.token !== token) return undefined;
    if (hit.claims.expiresAt <= now) {
      this.map.delete(key);
      return "expired";
    }
    return hit.claims;
  }

  set(token: string, claims: T): void {
    if (this.map.size >= this.max) {
      // Map keeps insertion order: bounded memory, no scan.
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
    this.map.set(tail(token), { token, claims });
  }
}

/** A token's last 22 characters: an ES256 signature's last 16 bytes, in base64url (what VerifiedCache keys by). */
function tail(token: string): string {
  return token.length > 22 ? token.slice(-22) : token;
}

function issuedAtMs(p: JWTPayload): number {
  return typeof p.ims === "number" && Math.floor(p.ims / 1000) === p.iat ? p.ims : p.iat! * 1000;
}
